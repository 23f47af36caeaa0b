package run_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// everyEvent is an observer with every ability: it writes down each event as it hears it, a
// measured call or count once for a run of them.
type everyEvent struct {
	mu       sync.Mutex
	events   []string
	dir      string
	calls    int // measured calls the hook saw
	counted  int // the last count of measured calls
	verdict  *run.Verdict
	finished *result.Run
}

func (o *everyEvent) add(e string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if n := len(o.events); n > 0 && o.events[n-1] == e {
		return
	}
	o.events = append(o.events, e)
}

func (o *everyEvent) RunStarted(_ context.Context, dir string) error {
	o.dir = dir
	if _, err := os.Stat(filepath.Join(dir, result.RunFile)); err != nil {
		return err
	}
	o.add("run started")
	return nil
}

func (o *everyEvent) ScenarioStarted(sc *suite.Scenario, index, total int) {
	o.add(fmt.Sprintf("scenario %s started (%d of %d)", sc.ID(), index+1, total))
}

func (o *everyEvent) MeasureStarted(sc *suite.Scenario) { o.add("measuring " + sc.ID()) }

func (o *everyEvent) CallCounted(_ *suite.Scenario, phase load.Phase, done int) {
	if phase == load.Measure {
		o.mu.Lock()
		o.counted = done
		o.mu.Unlock()
		o.add("calls")
	}
}

func (o *everyEvent) CallHook(*suite.Scenario, load.Config) engine.CallHook { return o }

func (o *everyEvent) Before(ctx context.Context, r subject.Request) context.Context { return ctx }

func (o *everyEvent) After(_ context.Context, c engine.Call) {
	if !c.Request.Warmup {
		o.mu.Lock()
		o.calls++
		o.mu.Unlock()
		o.add("calls")
	}
}

func (o *everyEvent) ScenarioFinished(r *result.Scenario) {
	o.add(fmt.Sprintf("scenario %s done (%s)", r.ID(), r.Status))
}

func (o *everyEvent) ScenariosFinished() { o.add("scenarios done") }

func (o *everyEvent) RunJudged(v *run.Verdict) {
	o.verdict = v
	o.add("judged")
}

func (o *everyEvent) RunFinished(_ context.Context, r *result.Run) error {
	o.finished = r
	o.add("run finished")
	return nil
}

var (
	_ run.RunStarter        = (*everyEvent)(nil)
	_ run.ScenarioStarter   = (*everyEvent)(nil)
	_ run.MeasureStarter    = (*everyEvent)(nil)
	_ run.CallCounter       = (*everyEvent)(nil)
	_ run.ScenarioFinisher  = (*everyEvent)(nil)
	_ run.ScenariosFinisher = (*everyEvent)(nil)
	_ run.RunJudger         = (*everyEvent)(nil)
	_ run.RunFinisher       = (*everyEvent)(nil)
)

// TestObserverHearsEveryEvent: one observer implementing every ability hears every event of a run
// of one scenario (2 warm-up and 5 measured iterations), in the order they happen: the run folder,
// the scenario started, its measured window, its calls, the scenario done, the scenarios done, the
// verdict and the finished run.
func TestObserverHearsEveryEvent(t *testing.T) {
	o := &everyEvent{}
	opts := tracedOptions(t)
	opts.Observers = []run.Observer{o}
	r, err := run.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"run started",
		"scenario traced/default started (1 of 1)",
		"measuring traced/default",
		"calls",
		"scenario traced/default done (ok)",
		"scenarios done",
		"judged",
		"run finished",
	}
	if diff := cmp.Diff(want, o.events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if o.calls != 5 || o.counted != 5 {
		t.Errorf("the hook saw %d measured calls and the last count was %d, want 5 and 5", o.calls, o.counted)
	}
	if o.verdict == nil || o.finished != r || filepath.Base(o.dir) != r.ID {
		t.Errorf("verdict %v, finished run %p (want %p), run folder %s (want the run %s's)", o.verdict, o.finished, r, o.dir, r.ID)
	}
}

// starterFails is an observer whose start fails.
type starterFails struct{}

func (starterFails) RunStarted(context.Context, string) error { return errors.New("port in use") }

// TestObserverErrors: an observer with no ability is a usage error naming its type, before
// anything runs; one whose start fails stops the run with its error, and the observers started
// before it are finished.
func TestObserverErrors(t *testing.T) {
	opts := tracedOptions(t)
	opts.Observers = []run.Observer{run.OnVerdict(func(*run.Verdict) {}), struct{ n int }{}}
	if _, err := run.Run(context.Background(), opts); !errors.Is(err, run.ErrUsage) || !strings.Contains(err.Error(), "observer 2 (struct { n int })") {
		t.Errorf("an observer with no ability: %v, want a usage error naming observer 2's type", err)
	}
	first := &everyEvent{}
	opts.Observers = []run.Observer{first, starterFails{}}
	if _, err := run.Run(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "port in use") {
		t.Errorf("a failing start: %v, want its error", err)
	}
	if diff := cmp.Diff([]string{"run started", "run finished"}, first.events); diff != "" {
		t.Errorf("the observer started before the failing one (-want +got):\n%s", diff)
	}
}
