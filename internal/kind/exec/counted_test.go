package exec

import (
	"context"
	"os/exec"
	"path/filepath"
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
// a shell and the command it starts, under callgrind). The first measured iteration's callgrind
// files are kept under the scenario's profiles folder.
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
	var counts []float64
	for i := range 3 {
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
	if counts[1] != counts[2] {
		t.Errorf("the same command counted %v then %v instructions", counts[1], counts[2])
	}
	kept := s.(subject.Counter).Kept()
	if len(kept) != 2 { // sh, and the /bin/true it starts
		t.Fatalf("kept %q, want the two processes' callgrind files", kept)
	}
	if kept[0] != filepath.Join(keep, "callgrind.out") {
		t.Errorf("kept %q first, want %s", kept[0], filepath.Join(keep, "callgrind.out"))
	}
	c, err := callgrind.ReadFiles(kept)
	if err != nil || float64(c.Instructions()) != counts[1] {
		t.Errorf("the kept files count %d (%v), want the measured iteration's %v", c.Instructions(), err, counts[1])
	}
	if id := s.(subject.Counter).Identity(); id["valgrind"] == "" {
		t.Errorf("identity %v has no valgrind version", id)
	}
}
