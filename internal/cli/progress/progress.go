// Package progress shows a run's progress on a terminal a person watches: a bar over the
// scenarios, described by the one running and its phase. When the output is piped or CI is set it
// shows nothing, and the run's log says what happens instead.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// Bar is a run.Observer that shows a run's progress bar on a terminal, and nothing elsewhere: it
// hears each scenario start, its calls and its end, and clears itself when the scenarios are done.
type Bar struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar
}

// Interactive reports whether w is a terminal a person watches: a terminal, with CI not set in
// the environment lookup reads.
func Interactive(w io.Writer, lookup func(string) (string, bool)) bool {
	if _, ci := lookup("CI"); ci {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// New returns the bar of a run that writes its progress to w: shown when Interactive(w, lookup),
// else silent (Shown is false).
func New(w io.Writer, lookup func(string) (string, bool)) *Bar {
	p := &Bar{}
	if Interactive(w, lookup) {
		p.bar = progressbar.NewOptions(0, // the total is set when the first scenario starts
			progressbar.OptionSetWriter(w),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(24),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetPredictTime(false),
		)
	}
	return p
}

// Shown reports whether the bar is shown (else the run's log should go to the console).
func (p *Bar) Shown() bool { return p.bar != nil }

// ScenarioStarted sets the bar's total on the first scenario and describes the one starting.
func (p *Bar) ScenarioStarted(sc *suite.Scenario, index, total int) {
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

// CallCounted describes the scenario's phase and the calls done in it.
func (p *Bar) CallCounted(sc *suite.Scenario, phase load.Phase, done int) {
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

// ScenarioFinished advances the bar.
func (p *Bar) ScenarioFinished(r *result.Scenario) {
	if p.bar == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.bar.Add(1)
}

// ScenariosFinished clears the bar when the scenarios are done, before the summary is printed.
func (p *Bar) ScenariosFinished() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
