package engine

import (
	"path/filepath"
	"testing"

	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// A counted subject is told an absolute folder for its files: the Python worker runs in its
// definition's folder, and a relative run folder (benchmark_results/…, as run gives it) put a
// function's bytecode.json under benches/benchmark_results/ in the source tree (issue 42).
func TestCountProfilesAbsolute(t *testing.T) {
	e := New(WithCountProfiles(filepath.Join("benchmark_results", "20261201_000000", "profiles")), WithMeasure(subject.MeasureInstructions))
	sc := &suite.Scenario{Benchmark: &suite.Benchmark{Name: "text"}, Name: "default"}
	var spec subject.Spec
	if why := e.countable(sc, subject.Kind{Name: "worker", Instructions: true}, &spec); why != "" {
		t.Fatal(why)
	}
	if !filepath.IsAbs(spec.ProfileDir) {
		t.Errorf("ProfileDir %q is relative: the subject's working folder would hold it", spec.ProfileDir)
	}
}
