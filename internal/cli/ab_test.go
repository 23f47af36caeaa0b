package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/cli/ab"
	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/store"
)

// Two commands A/B'd through their own timing (exec JSON): B three times slower is a regression
// (exit 3) with the ratio and its interval; the same command against itself passes, and its
// JSON is the run's, with the A/B in B's "ab" section.
func TestABCommands(t *testing.T) {
	fast := `exec:echo '{"latency_ms": 10}'`
	slow := `exec:echo '{"latency_ms": 30}'`
	code, out, errOut := runCLI(t, t.TempDir(), nil, "ab", fast, slow, "--exec-metrics", "--block-calls", "3", "--warmup", "1") // sequential: 16 pairs decide a constant 3x
	if code != ExitRegression || !strings.Contains(out, "B/A 3.0000") || !strings.Contains(out, "REGRESSION") {
		t.Fatalf("ab fast slow: exit %d, want 3 with B/A = 3\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, t.TempDir(), nil, "ab", fast, fast, "--exec-metrics", "--block-calls", "3", "--format", "json")
	r := abSection(t, out)
	if code != ExitOK || r.Verdict != compare.Unchanged || r.Answer != ab.AnswerSame || r.Ratio != 1 || r.Pairs != 16 || len(r.Blocks) != 32 {
		t.Fatalf("ab fast fast: exit %d, %+v\n%s", code, r, errOut)
	}
	if code, _, errOut := runCLI(t, t.TempDir(), nil, "ab", fast, "nosuch/bench"); code != ExitUsage || !strings.Contains(errOut, "nosuch/bench") {
		t.Errorf("ab with an unknown variant: exit %d, want 2 naming it\n%s", code, errOut)
	}
}

// abSection is the A/B of the run an `ab --format json` wrote to stdout: its one scenario's "ab"
// section.
func abSection(t *testing.T, stdout string) *ab.Result {
	t.Helper()
	var run result.Run
	if err := json.Unmarshal([]byte(stdout), &run); err != nil || len(run.Scenarios) != 1 {
		t.Fatalf("ab --format json: %v, %d scenarios, want the run of B\n%s", err, len(run.Scenarios), stdout)
	}
	var sec ab.RefSection
	if err := json.Unmarshal(run.Scenarios[0].Extra.Other[ab.SectionAB], &sec); err != nil || sec.Result == nil {
		t.Fatalf("ab --format json: scenario %s has no ab section (%v)\n%s", run.Scenarios[0].ID(), err, stdout)
	}
	return sec.Result
}

// Two scenarios of one matrix are variants by their IDs.
func TestABScenariosOfAMatrix(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "benches/cmd.yaml", `name: cmd
subject: {kind: exec, command: ["echo", "{\"latency_ms\": {ms}}"], metrics: json}
matrix:
  ms: [10, 11]
`)
	code, out, errOut := runCLI(t, dir, nil, "ab", "cmd/ms=10", "cmd/ms=11", "--block-calls", "2", "--threshold", "5")
	if code != ExitRegression || !strings.Contains(out, "B/A 1.1000") {
		t.Fatalf("ab cmd/ms=10 cmd/ms=11: exit %d, want 3 with B/A = 1.1\n%s%s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, dir, nil, "ab", "cmd/ms=10", "cmd/ms=12")
	if code != ExitUsage || !strings.Contains(errOut, "cmd/ms=11") {
		t.Errorf("ab with a scenario that does not exist: exit %d, want 2 listing the known ones\n%s", code, errOut)
	}
}

func writeFile(t *testing.T, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Two servers are two URLs: B's first token comes 10 ms later, a regression of ttft_ms.
func TestABServers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var urls [2]string
	for i, ttft := range []float64{2, 12} {
		u, err := mockserver.New(mockserver.Config{TTFT: workload.Fixed(ttft), ITL: workload.Fixed(1), OutputTokens: workload.Fixed(4)}).Start(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		urls[i] = u
	}
	code, out, errOut := runCLI(t, t.TempDir(), nil, "ab", "openai:"+urls[0], "openai:"+urls[1], "--model", "mock", "--metric", "ttft_ms",
		"--pairs", "8", "--block-calls", "3", "--warmup", "1") // 8: with 3 df one block slowed by a loaded machine hid a 6x change (p = 0.03)
	if code != ExitRegression || !strings.Contains(out, "ttft_ms (ms)  lower") || !strings.Contains(out, "REGRESSION") {
		t.Fatalf("ab of two servers: exit %d, want 3\n%s%s", code, out, errOut)
	}
}

// Broken definitions are a definition error (exit 2) in ab as in run, naming the problem.
func TestABBrokenDefinitions(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "benches/cmd.yaml", "name: cmd\nsubject: {kind: exec, command: [\"true\"]}\nbatchsize: 4\n")
	code, _, errOut := runCLI(t, dir, nil, "ab", "cmd", "cmd")
	if code != ExitUsage || !strings.Contains(errOut, "batchsize") {
		t.Errorf("ab with a broken definition: exit %d, want 2 naming the key\n%s", code, errOut)
	}
}

// An A/B writes no secret: a server that refuses every request and echoes the URL's password and
// a definition's header value in its error body leaves neither on stdout or stderr (text and
// JSON), as in a run (docs/reliability.md).
func TestABWritesNoSecret(t *testing.T) {
	const pw, key = "pw7Rq2xLm9", "hk4Zt8Wp1Nq6"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, p, _ := r.BasicAuth()
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"refused: password %s, key %s"}}`, p, r.Header.Get("X-Api-Key"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	writeFile(t, dir, "benches/srv.yaml", fmt.Sprintf(`name: srv
subject: {kind: openai, url: %q, model: m, headers: {X-Api-Key: %s}}
`, srv.URL, key))
	withPW := strings.Replace(srv.URL, "http://", "http://user:"+pw+"@", 1)
	for _, args := range [][]string{
		{"ab", "openai:" + withPW, "srv", "--model", "m", "--pairs", "3", "--block-calls", "2", "--warmup", "1"},
		{"ab", "openai:" + withPW, "srv", "--model", "m", "--pairs", "3", "--block-calls", "2", "--warmup", "1", "--format", "json"},
	} {
		code, out, errOut := runCLI(t, dir, nil, args...)
		if code == ExitOK {
			t.Errorf("ab against a server that refuses every request: exit 0\n%s%s", out, errOut)
		}
		if !strings.Contains(out+errOut, "refused") {
			t.Errorf("ab: the server's error is not shown\n%s%s", out, errOut)
		}
		for _, s := range []string{pw, key} {
			if strings.Contains(out+errOut, s) {
				t.Errorf("ab %s: secret %q written\nstdout: %s\nstderr: %s", args[len(args)-1], s, out, errOut)
			}
		}
	}
	// Nor in the run folders (run.json, run.log, the reports) or the store.
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		for _, s := range []string{pw, key} {
			if err == nil && strings.Contains(string(data), s) && !strings.HasSuffix(path, ".yaml") {
				t.Errorf("ab: secret %q written to %s", s, path)
			}
		}
		return nil
	})
}

// An A/B is a run of B, the side under test (issue 41): its folder under --output-dir holds
// run.json with B's calls as the scenario's metric, A's calls and the A/B in the scenario's "ab"
// section and the variants in environment.ab, and compare.json with the verdict; the run is in
// the history store, and --no-store keeps the next one out of it.
func TestABWritesARun(t *testing.T) {
	dir := t.TempDir()
	fast, slow := `exec:echo '{"latency_ms": 10}'`, `exec:echo '{"latency_ms": 30}'`
	code, out, errOut := runCLI(t, dir, nil, "ab", fast, slow, "--exec-metrics", "--block-calls", "2", "--warmup", "1", "--output-dir", "out")
	if code != ExitRegression || !strings.Contains(out, "results: "+filepath.Join(dir, "out")) {
		t.Fatalf("ab fast slow --output-dir out: exit %d, want 3 and the run folder named\n%s%s", code, out, errOut)
	}
	r, err := result.Load(filepath.Join(dir, "out", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	if got := result.EnvValue(r.Environment, ab.SectionAB, "a"); got != fast {
		t.Errorf("run.json environment.ab.a = %v, want %s", got, fast)
	}
	if len(r.Scenarios) != 1 {
		t.Fatalf("run.json has %d scenarios, want B's", len(r.Scenarios))
	}
	sc := r.Scenarios[0]
	var sec ab.RefSection
	if err := json.Unmarshal(sc.Extra.Other[ab.SectionAB], &sec); err != nil || sec.Result == nil || sec.Result.Answer != ab.AnswerSlower {
		t.Fatalf("run.json: the scenario's ab section is %s (%v), want A's calls and the answer slower", sc.Extra.Other[ab.SectionAB], err)
	}
	if b, a := sc.Metrics["latency_ms"], sec.Baseline; b.Summary == nil || b.Summary.Median != 30 || a.Summary == nil || a.Summary.Median != 10 {
		t.Errorf("run.json: B's latency_ms %+v and A's %+v, want medians 30 and 10", b.Summary, a.Summary)
	}
	var rep compare.Report
	if data, err := os.ReadFile(filepath.Join(dir, "out", "latest", "compare.json")); err != nil || json.Unmarshal(data, &rep) != nil || rep.Regressions != 1 {
		t.Errorf("compare.json: %v, %d regressions, want 1", err, rep.Regressions)
	}
	st, err := run.OpenStore(context.Background(), "", run.Env{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Get(context.Background(), r.ID); err != nil {
		t.Errorf("the A/B's run %s is not in the store: %v", r.ID, err)
	}
	code, out, errOut = runCLI(t, dir, nil, "ab", fast, fast, "--exec-metrics", "--block-calls", "2", "--output-dir", "out2", "--no-store")
	r2, err := result.Load(filepath.Join(dir, "out2", "latest"))
	if code != ExitOK || err != nil {
		t.Fatalf("ab fast fast --no-store: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if _, err := st.Get(context.Background(), r2.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ab --no-store: run %s in the store (%v)", r2.ID, err)
	}
}

// A flag the A/B would ignore is refused with the reason (exit 2), and nothing is written:
// --max-time with a fixed design, and the variants' flags when neither variant is of their kind.
func TestABRefusesIgnoredFlags(t *testing.T) {
	dir := t.TempDir()
	cmdA, cmdB := "exec:echo a", "exec:echo b"
	for _, tc := range []struct {
		args []string
		want string
	}{
		// A fixed design is judged once, at its last pair: --max-time bounds nothing.
		{[]string{cmdA, cmdB, "--pairs", "5", "--max-time", "10s"}, "ab --max-time with --pairs: a fixed design"},
		// Two commands ask for no model.
		{[]string{cmdA, cmdB, "--model", "llama"}, "ab --model: only openai: variants ask for a model"},
		// Two commands have no parameters to set.
		{[]string{cmdA, cmdB, "--set", "batch_size=8"}, "ab --set: only definition variants"},
		// Two servers print no metrics on stdout.
		{[]string{"openai:http://127.0.0.1:1/v1", "openai:http://127.0.0.1:2/v1", "--exec-metrics"}, "ab --exec-metrics: only exec: variants"},
	} {
		code, out, errOut := runCLI(t, dir, nil, append([]string{"ab"}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("ab %v: exit %d, want 2 and %q\n%s%s", tc.args, code, tc.want, out, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "benchmark_results")); err == nil {
		t.Error("a refused A/B wrote a run folder")
	}
}

// An unknown answer (3 pairs are too few for an interval) exits 0, says it has no interval
// (not [0, 0], its infinite end read back from run.json), and --strict fails it as every
// --strict gate does (exit 3), saying why.
func TestABStrictUnknown(t *testing.T) {
	same := `exec:echo '{"latency_ms": 10}'`
	args := []string{"ab", same, same, "--exec-metrics", "--pairs", "3", "--block-calls", "2", "--no-store"}
	if code, out, errOut := runCLI(t, t.TempDir(), nil, args...); code != ExitOK || !strings.Contains(out, "unknown: B/A 1.0000 (no interval: too few pairs)") {
		t.Errorf("ab with an unknown answer: exit %d, want 0 with the answer\n%s%s", code, out, errOut)
	} else if !strings.Contains(out, "UNKNOWN: not known: 1 gated change(s) this job's pairs could not tell from the threshold") || strings.Contains(out, "a single value a side") {
		// Before, the headline called it UNTESTED "(a single value a side)", which a paired
		// A/B never is.
		t.Errorf("ab with an unknown answer: the headline does not say unknown, and why\n%s", out)
	}
	code, out, errOut := runCLI(t, t.TempDir(), nil, append(args, "--strict")...)
	if code != ExitRegression || !strings.Contains(errOut, "1 unknown changes (--strict): not known") {
		t.Errorf("ab --strict with an unknown answer: exit %d, want 3 saying why\n%s%s", code, out, errOut)
	}
}

// A variant that cannot be measured fails the A/B (exit 1), with the reason in the run's
// scenario and an error that names the other side, not an empty baseline.
func TestABFailedVariant(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, dir, nil, "ab", "exec:false", "exec:true", "--pairs", "3", "--block-calls", "1", "--warmup", "1", "--no-store")
	if code != ExitError || !strings.Contains(errOut, "against exec:false: nothing comparable") || strings.Contains(errOut, "baseline :") {
		t.Fatalf("ab exec:false exec:true: exit %d, want 1 naming A\n%s%s", code, out, errOut)
	}
	r, err := result.Load(filepath.Join(dir, "benchmark_results", "latest"))
	if err != nil || len(r.Scenarios) != 1 || r.Scenarios[0].Status != result.StatusFailed || !strings.Contains(r.Scenarios[0].Error, "warm-up of exec:false") {
		t.Fatalf("run.json of a failed A/B: %v, %+v", err, r)
	}
}

// ab samples each variant during its own blocks, as a run against a ref samples its sides: a
// shell loop's CPU time is B's, a sleep's is A's (in the ab section). Before, ab turned the
// monitors off and the run had no resource figures.
func TestABSamplesEachVariant(t *testing.T) {
	dir := t.TempDir()
	loop := `exec:sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'`
	code, out, errOut := runCLI(t, dir, nil, "ab", "exec:sleep 0.05", loop, "--pairs", "6", "--no-store")
	if code != ExitOK && code != ExitRegression {
		t.Fatalf("ab: exit %d\n%s%s", code, out, errOut)
	}
	r, err := result.Load(filepath.Join(dir, "benchmark_results", "latest"))
	if err != nil || len(r.Scenarios) != 1 {
		t.Fatalf("run.json: %v, %+v", err, r)
	}
	sc := r.Scenarios[0]
	var sec ab.RefSection
	if err := json.Unmarshal(sc.Extra.Other[ab.SectionAB], &sec); err != nil {
		t.Fatal(err)
	}
	b, okB := sc.Metrics["cpu_s"]
	a, okA := sec.BaselineMetrics["cpu_s"]
	if !okA || !okB || a.Value == nil || b.Value == nil || *b.Value <= 2**a.Value {
		t.Errorf("cpu_s: A (sleep) %+v, B (loop) %+v: want each variant's own, B's the larger", a, b)
	}
}
