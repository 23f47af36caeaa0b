package exec

import (
	"context"
	"fmt"
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

// A command that forks without exec (a shell's subshells) is counted once per process: each
// child starts from zero, not from its parent's counts at the fork. Before, every child's
// callgrind file repeated the parent's counts up to its fork and the files were summed, so that
// n subshells counted about n²/2 times the loop's work (20 forks 7.7 M instructions, 200 forks
// 292 M): the count now grows by the same amount for each 10 subshells more, and a subshell
// costs a small part of the shell's own start.
func TestCountedForks(t *testing.T) {
	needValgrind(t)
	count := func(n int) float64 {
		t.Helper()
		s, err := Open(context.Background(), subject.Spec{
			Config:  &Config{Command: fmt.Sprintf("i=0; while [ $i -lt %d ]; do (true); i=$((i+1)); done", n), Shell: true},
			Measure: subject.MeasureInstructions,
		})
		if err != nil {
			t.Fatal(err)
		}
		o, err := s.Do(context.Background(), subject.Request{})
		if err != nil {
			t.Fatal(err)
		}
		return o.Values[callgrind.Instructions]
	}
	c0, c10, c20 := count(0), count(10), count(20)
	first, second := c10-c0, c20-c10
	t.Logf("0, 10, 20 subshells: %.0f, %.0f, %.0f instructions", c0, c10, c20)
	if second > 1.1*first || second < 0.9*first {
		t.Errorf("10 subshells more count %.0f then %.0f instructions: want the same (each process counted once)", first, second)
	}
	if per := first / 10; per > c0/4 {
		t.Errorf("a subshell counts %.0f instructions, the shell alone %.0f: the child counts its parent's work again", per, c0)
	}
}
