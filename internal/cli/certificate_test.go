package cli

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/result"
)

// TestCertificateWarmPrefixCache runs two benchmarks twice against one mockserver with a prefix
// cache, whose counters inferbench scrapes at /metrics: one with a cache_key (the same prompts
// every run), one with the default per-run prompts. The second run of the first finds its
// prompts in the cache the first run warmed: prefix_cache fails, and the run's table shows the
// certificate above the table. The per-run prompts find nothing, and pass. Comparing the two
// runs says in its headline that the certificates differ.
func TestCertificateWarmPrefixCache(t *testing.T) {
	mock := mockserver.New(mockserver.Config{TTFT: workload.Fixed(25), ITL: workload.Fixed(1), OutputTokens: workload.Fixed(8), PrefixCache: true, Seed: 1})
	srv := httptest.NewServer(mock.Handler())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	benches := filepath.Join(dir, "benches")
	if err := os.MkdirAll(benches, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, key := range map[string]string{"fixed": ", cache_key: same", "fresh": ""} {
		y := "name: " + name + "\nsubject:\n  kind: openai\n  url: " + srv.URL + "/v1\n  model: mock\n" +
			"  workload: {input_tokens: 64, output_tokens: 8" + key + "}\n" +
			"load: {mode: concurrency, concurrency: 2, warmup_iterations: 2, measurement_iterations: 160}\n"
		if err := os.WriteFile(filepath.Join(benches, name+".yaml"), []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "results")
	var runs []*result.Run
	var stdouts []string
	for range 2 {
		code, stdout, stderr := runCLI(t, dir, nil, "run", benches, "--output-dir", out)
		if code != ExitOK {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		r, err := result.Load(filepath.Join(out, result.LatestLink, result.RunFile))
		if err != nil {
			t.Fatal(err)
		}
		runs, stdouts = append(runs, r), append(stdouts, stdout)
	}
	verdict := func(r *result.Run, bench string) result.CertCheck {
		t.Helper()
		for _, sc := range r.Scenarios {
			if sc.Benchmark == bench {
				k, ok := sc.Extra.Certificate.Check("prefix_cache")
				if !ok {
					t.Fatalf("%s: no prefix_cache check in %+v", bench, sc.Extra.Certificate)
				}
				return k
			}
		}
		t.Fatalf("no scenario of %s", bench)
		return result.CertCheck{}
	}
	if k := verdict(runs[1], "fixed"); k.Verdict != result.CertFail || k.Value < 50 {
		t.Errorf("second run, same prompts: prefix_cache %+v, want a fail at a high hit rate", k)
	}
	if k := verdict(runs[1], "fresh"); k.Verdict != result.CertPass {
		t.Errorf("second run, per-run prompts: prefix_cache %+v, want pass", k)
	}
	if k := verdict(runs[0], "fixed"); k.Verdict == result.CertFail {
		t.Errorf("first run, same prompts: prefix_cache %+v, want no fail (nothing cached yet)", k)
	}
	table := stdouts[1]
	at, head := strings.Index(table, "fixed/"), strings.Index(table, "SCENARIO")
	if at < 0 || head < 0 || at > head || !strings.Contains(table[:head], "prefix_cache") {
		t.Errorf("the run's table does not lead with the certificates:\n%s", table)
	}
	code, stdout, stderr := runCLI(t, dir, nil, "compare", runs[0].ID, runs[1].ID, "--results-dir", out)
	if code != ExitOK && code != ExitRegression {
		t.Fatalf("compare: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// On a loaded machine client_delays may fail too (listed before prefix_cache): the headline
	// must name prefix_cache among the new run's failing checks.
	if !regexp.MustCompile(`certificates differ: the new run fails [a-z_, ]*\bprefix_cache\b`).MatchString(stdout) {
		t.Errorf("compare's output does not say the certificates differ:\n%s", stdout)
	}
}
