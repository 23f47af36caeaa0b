package engine_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/suite"
)

// measureCounter hears the measured window open and the calls counted in each phase.
type measureCounter struct {
	mu     sync.Mutex
	events []string
}

func (m *measureCounter) MeasureStarted(sc *suite.Scenario) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, "measuring "+sc.ID())
}

func (m *measureCounter) CallCounted(_ *suite.Scenario, phase load.Phase, done int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	what := "measure"
	if phase == load.Warmup {
		what = "warm-up"
	}
	m.events = append(m.events, fmt.Sprintf("%s %d", what, done))
}

// TestHooks: the hooks set are called, here the measured window opening after the warm-up calls
// and before the measured ones; those left nil are not.
func TestHooks(t *testing.T) {
	m := &measureCounter{}
	e := engine.New(engine.WithChecker(&suite.Checker{EnableMock: true}),
		engine.WithHooks(engine.Hooks{MeasureStarted: m.MeasureStarted, CallCounted: m.CallCounted}))
	runAll(t, e, scenarios(t, `name: s
subject: {kind: mock, latency_ms: 1}
load: {warmup_iterations: 2, measurement_iterations: 3}
`))
	want := []string{"warm-up 1", "warm-up 2", "measuring s/default", "measure 1", "measure 2", "measure 3"}
	if diff := cmp.Diff(want, m.events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
