package compare

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// TestSharedKeyRefused: a run two of whose different scenarios share one matching key is not
// compared (nothing comparable, naming both); the same scenario twice is one identity. Before,
// the second took the first's baseline without a word (issue 46: pint's 104 tests, 36 keys).
func TestSharedKeyRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 6))
	mk := func(name, source string) result.Scenario {
		s := scenario("test_getattr", map[string]any{"key": "xxxxx"}, map[string][]float64{"latency_ms": lognormal(rng, 30, 1, 0.02)})
		s.Scenario, s.Source = name, source
		return s
	}
	old := run("old", mk("kilometer", "t.py::test_getattr[kilometer]"), mk("second", "t.py::test_getattr[second]"))
	new := run("new", mk("kilometer", "t.py::test_getattr[kilometer]"), mk("second", "t.py::test_getattr[second]"))
	rep := Runs(old, new, Config{})
	if !rep.Failed() || len(rep.Rows) != 0 || !strings.Contains(rep.NoEvidence, "different scenarios with one matching key") ||
		!strings.Contains(rep.NoEvidence, "test_getattr/kilometer") || !strings.Contains(rep.NoEvidence, "test_getattr/second") {
		t.Errorf("shared key: failed %v, %d rows, %q", rep.Failed(), len(rep.Rows), rep.NoEvidence)
	}
	if why := Shared(run("twice", mk("kilometer", "s"), mk("kilometer", "s"))); why != "" {
		t.Errorf("the same scenario twice: %q", why)
	}
	distinct := run("d", scenario("b", map[string]any{"n": 1}, nil), scenario("b", map[string]any{"n": 2}, nil))
	if why := Shared(distinct); why != "" {
		t.Errorf("distinct parameters: %q", why)
	}
}

// TestRecordedThresholds: a scenario's recorded thresholds (the pytest plugin's latency_ms 5%)
// judge a comparison whose command line says nothing of the metric, so that a hand-run compare
// of a saved session judges as the plugin did; a --threshold still wins. Before, the same +8%
// passed by hand (compare's 15%) and failed in the plugin.
func TestRecordedThresholds(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	mk := func(median float64, rec map[string]float64) *result.Run {
		s := scenario("test_parse", nil, map[string][]float64{"latency_ms": lognormal(rng, 99, median, 0.01)})
		s.Scenario, s.Thresholds = "default", rec
		return run("r", s)
	}
	rec := map[string]float64{"latency_ms": 5}
	verdict := func(cfg Config, old, new *result.Run) (string, float64) {
		t.Helper()
		rep := Runs(old, new, cfg)
		for _, r := range rep.Rows {
			if r.Metric == "latency_ms" {
				return r.Verdict, r.Threshold
			}
		}
		t.Fatalf("no latency_ms row: %+v", rep)
		return "", 0
	}
	if v, th := verdict(Config{}, mk(1, rec), mk(1.08, rec)); v != Regression || th != 5 {
		t.Errorf("recorded 5%%, +8%%: %s at threshold %v, want a regression at 5", v, th)
	}
	if v, th := verdict(Config{}, mk(1, nil), mk(1.08, nil)); v == Regression || th != 15 {
		t.Errorf("nothing recorded, +8%%: %s at threshold %v, want no regression at 15", v, th)
	}
	var cfg Config
	if err := cfg.Thresholds.Set("latency_ms=10"); err != nil {
		t.Fatal(err)
	}
	if v, th := verdict(cfg, mk(1, rec), mk(1.08, rec)); v == Regression || th != 10 {
		t.Errorf("--threshold latency_ms=10 over recorded 5%%: %s at %v", v, th)
	}
}

// TestBenchstatAcrossSession: in a comparison of many scenarios each row's p-value is
// benchstat's, and its significance is benchstat's with --uncorrected; by default the false
// discovery rate is controlled across the comparison (Benjamini-Hochberg), which makes some of
// benchstat's significant rows not significant (never the reverse). Before, docs/history.md
// claimed 0 mismatches with benchstat, true of one-scenario comparisons only, and benchstat's
// split was not available.
func TestBenchstatAcrossSession(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 7))
	var olds, news []result.Scenario
	for i := range 21 {
		shift := []float64{1, 1.02, 1.03, 1.04}[i%4]
		olds = append(olds, scenario("b", map[string]any{"i": i}, map[string][]float64{"latency_ms": lognormal(rng, 20, 10, 0.05)}))
		news = append(news, scenario("b", map[string]any{"i": i}, map[string][]float64{"latency_ms": lognormal(rng, 20, 10*shift, 0.05)}))
	}
	old, new := run("a", olds...), run("b", news...)
	corrected := Runs(old, new, Config{})
	uncorrected := Runs(old, new, Config{Uncorrected: true})
	if uncorrected.Correction != Uncorrected {
		t.Errorf("correction %q", uncorrected.Correction)
	}
	differ := 0
	for i := range 21 {
		theirs := benchstatSignificant(t, run("a", olds[i]), run("b", news[i]))
		c, u := corrected.Rows[i], uncorrected.Rows[i]
		if u.Significant != theirs || u.P != c.P {
			t.Errorf("row %d: uncorrected significant %v, benchstat %v (p %v, %v)", i, u.Significant, theirs, u.P, c.P)
		}
		if c.Significant && !theirs {
			t.Errorf("row %d: significant corrected and not by benchstat", i)
		}
		if c.Significant != theirs {
			differ++
		}
	}
	if differ == 0 {
		t.Errorf("no row differs: the session shows nothing of the correction")
	}
	t.Logf("%d of 21 rows differ from benchstat by default (corrected across the session), 0 with --uncorrected", differ)

	// The benchstat command itself, as a user runs it on two exports (export --format gobench):
	// its "~" rows are the uncorrected comparison's not significant ones.
	bs := benchstatCommand()
	if bs == "" {
		t.Skip("benchstat is not installed (.ci/run installs it: go install golang.org/x/perf/cmd/benchstat)")
	}
	dir := t.TempDir()
	for name, r := range map[string]*result.Run{"old.txt": old, "new.txt": new} {
		var b bytes.Buffer
		if err := result.WriteGoBench(&b, r); err != nil {
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
	rows := 0
	for _, line := range strings.Split(string(out), "\n") {
		m := regexp.MustCompile(`\bi[=:](\d+)\b.*\(p=`).FindStringSubmatch(line)
		if m == nil {
			continue
		}
		i, _ := strconv.Atoi(m[1])
		if sig := !strings.Contains(line, " ~ "); i < len(uncorrected.Rows) && sig != uncorrected.Rows[i].Significant {
			t.Errorf("benchstat's row i=%d says significant %v, compare --uncorrected %v:\n%s", i, sig, uncorrected.Rows[i].Significant, line)
		}
		rows++
	}
	if rows != 21 {
		t.Errorf("benchstat printed %d comparable rows, want 21:\n%s", rows, out)
	}
}

// benchstatCommand is the benchstat binary on PATH or in Go's bin folder, or "".
func benchstatCommand() string {
	if p, err := exec.LookPath("benchstat"); err == nil {
		return p
	}
	for _, d := range []string{os.Getenv("GOBIN"), filepath.Join(os.Getenv("GOPATH"), "bin"), filepath.Join(os.Getenv("HOME"), "go", "bin")} {
		if p := filepath.Join(d, "benchstat"); d != "" && isExec(p) {
			return p
		}
	}
	return ""
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
