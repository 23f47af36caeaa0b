package engine_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/subject"
)

// badSetup reports setup figures that cannot be measurements beside a good one.
type badSetup struct{}

func (badSetup) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	now := time.Now()
	return subject.Observation{Start: now, End: now.Add(time.Microsecond)}, nil
}
func (badSetup) Close() error { return nil }
func (badSetup) SetupValues() map[string]float64 {
	return map[string]float64{"compile_time_ms": -40, "first_call_ms": math.Inf(1), "startup_ms": 12}
}

// warnSetup is a subject whose setup could not do all it was asked.
type warnSetup struct{ badSetup }

func (warnSetup) Warnings() []string {
	return []string{"torch_llm: kernelized: no layer kernelized: no cpu kernel"}
}

func init() {
	subject.Register(subject.Kind{Name: "test-badsetup", Open: func(context.Context, subject.Spec) (subject.Subject, error) { return badSetup{}, nil }})
	subject.Register(subject.Kind{Name: "test-warnsetup", Open: func(context.Context, subject.Spec) (subject.Subject, error) { return warnSetup{}, nil }})
}

// TestSubjectWarnings: what a subject's setup reports as a warning (a worker's kernelized setup
// that replaced no layer) is one of its scenario's warnings; it was dropped before.
func TestSubjectWarnings(t *testing.T) {
	scs := scenarios(t, "name: s\nsubject: {kind: test-warnsetup}\nload: {warmup_iterations: 0, measurement_iterations: 3}\n")
	s := runAll(t, engine.New(), scs).Scenarios[0]
	if !slices.Contains(s.Warnings, "torch_llm: kernelized: no layer kernelized: no cpu kernel") {
		t.Errorf("warnings %q lack the subject's", s.Warnings)
	}
}

// TestSetupValuesChecked checks a subject's setup figures (a worker's compile time, first call):
// an impossible one is dropped with a warning naming it, not recorded as a metric.
func TestSetupValuesChecked(t *testing.T) {
	scs := scenarios(t, "name: s\nsubject: {kind: test-badsetup}\nload: {warmup_iterations: 0, measurement_iterations: 3}\n")
	run := runAll(t, engine.New(), scs)
	s := run.Scenarios[0]
	if _, ok := s.Metrics["first_call_ms"]; ok {
		t.Errorf("first_call_ms = +Inf recorded: %+v", s.Metrics["first_call_ms"])
	}
	if v, _ := s.Metrics["compile_time_ms"].Center(); v < 0 {
		t.Errorf("compile_time_ms = %v recorded", v)
	}
	if v, _ := s.Metrics["startup_ms"].Center(); v != 12 {
		t.Errorf("startup_ms = %v, want 12", v)
	}
	w := strings.Join(s.Warnings, "\n")
	if !strings.Contains(w, "compile_time_ms = -40") || !strings.Contains(w, "first_call_ms = +Inf") {
		t.Errorf("warnings %q do not name the dropped figures", w)
	}
}
