package engine_test

import (
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// A kind that cannot be counted (the mock model, a server) fails in instruction mode with the
// reason, whether a definition or --measure asks, rather than being timed as if nothing was asked.
func TestMeasureInstructionsRefused(t *testing.T) {
	checker := engine.WithChecker(&suite.Checker{EnableMock: true})
	for name, c := range map[string]struct {
		src  string
		opts []engine.Option
	}{
		"definition": {"name: m\nsubject: {kind: mock, latency_ms: 0.1}\nmeasure: instructions\n", []engine.Option{checker}},
		"flag":       {"name: m\nsubject: {kind: mock, latency_ms: 0.1}\n", []engine.Option{checker, engine.WithMeasure("instructions")}},
	} {
		run := runAll(t, engine.New(c.opts...), scenarios(t, c.src))
		s := run.Scenarios[0]
		if s.Status != result.StatusFailed || !strings.Contains(s.Error, "the mock subject cannot be counted under valgrind") {
			t.Errorf("%s: %s %q, want failed: the mock subject cannot be counted", name, s.Status, s.Error)
		}
	}
}
