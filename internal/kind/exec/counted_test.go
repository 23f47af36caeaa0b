package exec

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/inferbench/inferbench/internal/base/callgrind"
	"github.com/inferbench/inferbench/internal/testkit/require"
	"github.com/inferbench/inferbench/subject"
)

func needValgrind(t *testing.T) {
	t.Helper()
	if _, err := callgrind.Find(); err != nil {
		require.Skipf(t, require.Valgrind, "%v", err)
	}
}

// A command counted twice gives the same count: instruction mode's promise (the whole process,
// a shell and the command it starts, under callgrind). The first measured iterations' callgrind
// files are kept under the scenario's profiles folder, each iteration's in a folder of its own
// (the first's at the top), as many as keepRuns (issue 34: explain's chunks).
func TestCountedTwice(t *testing.T) {
	needValgrind(t)
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	keep := filepath.Join(t.TempDir(), "profiles", "cmd")
	s, err := Open(context.Background(), subject.Spec{
		Config:  &Config{Command: "true; /bin/true", Shell: true},
		Measure: subject.MeasureInstructions, ProfileDir: keep,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.(*Command).count.keepRuns = 2
	var counts []float64
	for i := range 4 {
		o, err := s.Do(context.Background(), subject.Request{Index: i, Warmup: i == 0})
		if err != nil {
			t.Fatal(err)
		}
		n, c := o.Values[callgrind.Instructions], o.Values[callgrind.EstCycles]
		if n < 1000 || c < n {
			t.Fatalf("iteration %d: instructions %v, est_cycles %v: want a count of thousands, cycles at least as many", i, n, c)
		}
		if _, ok := o.Values[PeakRSS]; ok {
			t.Errorf("iteration %d reports %s: that would be valgrind's", i, PeakRSS)
		}
		counts = append(counts, n)
	}
	if counts[1] != counts[2] || counts[2] != counts[3] {
		t.Errorf("the same command counted %v instructions", counts[1:])
	}
	kept := s.(subject.Counter).Kept()
	want := []string{ // sh, and the /bin/true it starts; two measured iterations of three
		filepath.Join(keep, "callgrind.out"), filepath.Join(keep, "callgrind.out.2"),
		filepath.Join(keep, "iteration-2", "callgrind.out"), filepath.Join(keep, "iteration-2", "callgrind.out.2"),
	}
	if !slices.Equal(kept, want) {
		t.Fatalf("kept %q, want %q", kept, want)
	}
	for i := range 2 {
		c, err := callgrind.ReadFiles(kept[2*i : 2*i+2])
		if err != nil || float64(c.Instructions()) != counts[1+i] {
			t.Errorf("iteration %d's kept files count %d (%v), want the measured iteration's %v", i+1, c.Instructions(), err, counts[1+i])
		}
	}
	if id := s.(subject.Counter).Identity(); id["valgrind"] == "" {
		t.Errorf("identity %v has no valgrind version", id)
	}
}
