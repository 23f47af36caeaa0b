package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/base/callgrind"
	"github.com/inferbench/inferbench/internal/testkit/require"
	"github.com/inferbench/inferbench/result"
)

// Without valgrind, --measure instructions is one clear error naming the package to install and
// the flag, before anything runs.
func TestMeasureInstructionsWithoutValgrind(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // what exec.LookPath searches
	dir := t.TempDir()
	code, _, stderr := runCLI(t, dir, nil, "run", "--exec", "/bin/true", "--measure", "instructions", "--no-store")
	if code != 1 || !strings.Contains(stderr, "apt-get install valgrind") || !strings.Contains(stderr, "--measure instructions") {
		t.Errorf("exit %d, stderr %q: want 1 and an error naming the valgrind package and the flag", code, stderr)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "benchmark_results")); len(entries) > 0 {
		t.Errorf("a run folder was written before the error: %v", entries)
	}
	if code, _, stderr := runCLI(t, dir, nil, "run", "--exec", "/bin/true", "--measure", "cycles"); code != 2 || !strings.Contains(stderr, "want time or instructions") {
		t.Errorf("--measure cycles: exit %d, stderr %q; want a usage error", code, stderr)
	}
}

// A command counted twice: the run records the counts as samples, the identity and the kept
// callgrind files (one a measured iteration), and the comparison of the two runs gates on instructions and passes.
func TestMeasureInstructionsRun(t *testing.T) {
	if _, err := callgrind.Find(); err != nil {
		require.Skipf(t, require.Valgrind, "%v", err)
	}
	dir := t.TempDir()
	args := []string{"run", "--exec", "/bin/true", "--measure", "instructions", "--iterations", "3", "--warmup", "1", "--no-store", "--format", "none", "--no-monitor"}
	var runs []string
	for range 2 {
		if code, _, stderr := runCLI(t, dir, nil, args...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		latest, err := filepath.EvalSymlinks(filepath.Join(dir, "benchmark_results", "latest"))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, latest)
	}
	b, err := os.ReadFile(filepath.Join(runs[1], "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r result.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	s := r.Scenarios[0]
	m := s.Metrics["instructions"]
	if len(m.Samples) != 3 || m.Unit != "count" || m.Samples[0] != m.Samples[2] {
		t.Fatalf("instructions %+v: want 3 equal samples of unit count", m)
	}
	if len(s.Metrics["est_cycles"].Samples) != 3 || s.Counted["valgrind"] == "" {
		t.Errorf("est_cycles %+v, counted %v: want 3 samples and valgrind's version", s.Metrics["est_cycles"], s.Counted)
	}
	// Each of the 3 measured iterations keeps its callgrind file, the first where it always was
	// and the others in a folder of their own: explain reads them as chunks.
	want := []string{"profiles/exec__default/callgrind.out", "profiles/exec__default/iteration-2/callgrind.out", "profiles/exec__default/iteration-3/callgrind.out"}
	if !slices.Equal(s.Profiles, want) {
		t.Errorf("profiles %q, want %q", s.Profiles, want)
	}
	for _, p := range s.Profiles {
		if _, err := os.Stat(filepath.Join(runs[1], p)); err != nil {
			t.Error(err)
		}
	}
	code, stdout, stderr := runCLI(t, dir, nil, "compare", runs[0], runs[1])
	if code != 0 || !strings.Contains(stdout, "gated: instructions") {
		t.Errorf("compare of two counts of the same command: exit %d\n%s%s", code, stdout, stderr)
	}
}

// A secret in a counted command's arguments is masked in the callgrind files kept in the run
// folder, as everywhere else: callgrind writes the command line into each ("cmd:"), and CI
// uploads the folder. Before, profiles/.../callgrind.out held it in clear.
func TestMeasureInstructionsSecret(t *testing.T) {
	if _, err := callgrind.Find(); err != nil {
		require.Skipf(t, require.Valgrind, "%v", err)
	}
	const secret = "hf_CountedSecret0123456789abcdef"
	dir := t.TempDir()
	code, _, stderr := runCLI(t, dir, []string{"HF_TOKEN=" + secret}, "run", "--exec", "/bin/echo --token="+secret,
		"--measure", "instructions", "--iterations", "2", "--warmup", "0", "--no-store", "--format", "none", "--no-monitor")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	kept := 0
	filepath.WalkDir(filepath.Join(dir, "benchmark_results"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := os.ReadFile(p)
		if strings.Contains(string(data), secret) {
			t.Errorf("%s holds the secret", p)
		}
		if strings.HasPrefix(d.Name(), "callgrind.out") {
			kept++
			if !strings.Contains(string(data), "cmd: ") || !strings.Contains(string(data), "totals:") {
				t.Errorf("%s lost its command line or totals:\n%.300s", p, data)
			}
		}
		return nil
	})
	if kept == 0 {
		t.Error("no callgrind file kept")
	}
}
