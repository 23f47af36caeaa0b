package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/inferbench/inferbench/engine"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// progress shows a run's progress bar when stderr is a terminal and CI is not set (the run's
// log goes to stderr otherwise).
type progress struct {
	mu  sync.Mutex
	o   *IO
	bar *progressbar.ProgressBar
}

// interactive reports whether w is a terminal a person watches.
func interactive(w io.Writer, o *IO) bool {
	if _, ci := o.LookupEnv("CI"); ci {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func newProgress(o *IO) *progress {
	p := &progress{o: o}
	if interactive(o.Stderr, o) {
		p.bar = progressbar.NewOptions(0, // the total is set when the first scenario starts
			progressbar.OptionSetWriter(o.Stderr),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(24),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetPredictTime(false),
		)
	}
	return p
}

func (p *progress) ScenarioStarted(sc *suite.Scenario, index, total int) {
	if p.bar == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if index == 0 {
		p.bar.ChangeMax(total)
	}
	p.bar.Describe(sc.ID())
}

func (p *progress) Observed(sc *suite.Scenario, phase load.Phase, done int) {
	if p.bar == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	what := "measure"
	if phase == load.Warmup {
		what = "warm-up"
	}
	p.bar.Describe(fmt.Sprintf("%s  %s %d", sc.ID(), what, done))
}

func (p *progress) ScenarioDone(r *result.Scenario) {
	if p.bar == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.bar.Add(1)
}

// Finish clears the bar when the scenarios are done, before the summary is printed.
func (p *progress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

var _ engine.Listener = (*progress)(nil)
