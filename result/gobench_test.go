package result

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/stats"
)

// gobenchRun is a run of two scenarios with latency samples around center ms, recorded at commit.
func gobenchRun(id, commit string, seed uint64, center float64) *Run {
	rng := rand.New(rand.NewPCG(seed, 1))
	r := &Run{Schema: Schema, ID: id, StartedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Environment: map[string]any{"git": map[string]any{"commit": commit}}}
	for _, sc := range []string{"batch_size=1", "batch_size=8"} {
		xs := make([]float64, 20)
		for i := range xs {
			xs[i] = center * (1 + 0.01*rng.NormFloat64())
		}
		s, _ := stats.Summarize(xs)
		r.Scenarios = append(r.Scenarios, Scenario{Benchmark: "resnet", Scenario: sc, Status: StatusOK,
			Metrics: map[string]Metric{"latency_ms": {Unit: "ms", Better: "lower", Summary: &s, Samples: xs}}})
	}
	r.Tally()
	return r
}

// benchstatPath finds the benchstat command: on PATH, else where `go install` puts it
// ($GOBIN, $GOPATH/bin, ~/go/bin); .ci/run installs the pinned version.
func benchstatPath() string {
	if p, err := exec.LookPath("benchstat"); err == nil {
		return p
	}
	var dirs []string
	if d := os.Getenv("GOBIN"); d != "" {
		dirs = append(dirs, d)
	}
	if d := os.Getenv("GOPATH"); d != "" {
		dirs = append(dirs, filepath.Join(d, "bin"))
	}
	if h, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(h, "go", "bin"))
	}
	for _, d := range dirs {
		if p := filepath.Join(d, "benchstat"); fileExists(p) {
			return p
		}
	}
	return ""
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// The documented workflow, with the command a user runs: two exports, then `benchstat old.txt
// new.txt`, shows one table comparing them with p-values. Failed before: each export carried its
// run id (and its commit) as a file-level configuration line, which benchstat groups tables by:
// it printed one table per file and compared nothing.
func TestBenchstatComparesTwoExports(t *testing.T) {
	bs := benchstatPath()
	if bs == "" {
		t.Skip("benchstat is not installed (go install golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da; .ci/run does)")
	}
	dir := t.TempDir()
	for name, r := range map[string]*Run{
		"old.txt": gobenchRun("20261101_000000-aaaaaaaa", "1111111111", 1, 10),
		"new.txt": gobenchRun("20261102_000000-bbbbbbbb", "2222222222", 2, 13),
	} {
		var b bytes.Buffer
		if err := WriteGoBench(&b, r); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bs, "old.txt", "new.txt")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat old.txt new.txt: %v\n%s", err, out)
	}
	text := string(out)
	var headers, compared int
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "old.txt") && strings.Contains(l, "new.txt") {
			headers++
		}
		if strings.Contains(l, "Resnet/batch_size=") && strings.Contains(l, "+29.") && strings.Contains(l, "(p=0.000 n=20)") {
			compared++
		}
	}
	if headers != 1 || compared != 2 || !strings.Contains(text, "vs base") {
		t.Errorf("benchstat old.txt new.txt: %d tables with both files, %d scenarios compared with a p-value; want 1 and 2:\n%s", headers, compared, text)
	}
}
