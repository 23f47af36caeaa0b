package cli

// Tests of the trust promises of docs/reliability.md that need the whole command line: runs and
// imports are never lost or replaced in the store.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/stage/recovery"
	"github.com/inferbench/inferbench/internal/testkit/storetest"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
)

// storedRuns lists the runs of the SQLite store at path.
func storedRuns(t *testing.T, path string) []store.RunInfo {
	t.Helper()
	st, err := store.Open(context.Background(), store.Params{URL: "sqlite:" + path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	infos, err := st.List(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return infos
}

// Eight runs started at once into one store, each with its own output folder, are eight runs.
// Before run ids were random, they shared the second's id and the store kept one of the eight.
func TestConcurrentRunsIntoOneStoreAreKept(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "same.db")
	const n = 8
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, _ = runCLI(t, dir, nil, "run", "--exec", "true", "--iterations", "2", "--warmup", "0",
				"--no-monitor", "--store", db, "--output-dir", fmt.Sprintf("out%d", i), "--format", "none")
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != ExitOK {
			t.Errorf("run %d: exit %d", i, c)
		}
	}
	infos := storedRuns(t, db)
	if len(infos) != n {
		t.Fatalf("%d runs in the store, want %d", len(infos), n)
	}
	// Each folder's run.json carries the id it was stored under.
	ids := map[string]bool{}
	for _, ri := range infos {
		ids[ri.ID] = true
	}
	for i := range n {
		r, err := result.Load(filepath.Join(dir, fmt.Sprintf("out%d", i), result.LatestLink))
		if err != nil {
			t.Fatal(err)
		}
		if !ids[r.ID] {
			t.Errorf("out%d: run %s is not in the store", i, r.ID)
		}
	}
}

// Two files of the same name imported in the same second are two runs; an id asked for with --id
// that is taken is an error, never a replaced run.
func TestImportSameNameTwice(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"a", "b"} {
		os.MkdirAll(filepath.Join(dir, sub), 0o755)
		os.WriteFile(filepath.Join(dir, sub, "bench.txt"), []byte("BenchmarkX-8\t1000\t1000 ns/op\nBenchmarkX-8\t1000\t1010 ns/op\n"), 0o644)
	}
	code, out, errOut := runCLI(t, dir, nil, "import", "a/bench.txt", "b/bench.txt", "--time", "2026-03-01T12:00:00Z")
	if code != ExitOK {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	if ids := strings.Fields(out); len(ids) != 2 || ids[0] == ids[1] {
		t.Errorf("import printed ids %q, want two different ids", ids)
	}
	if infos := storedRuns(t, filepath.Join(dir, store.DefaultPath)); len(infos) != 2 {
		t.Errorf("%d runs stored, want 2", len(infos))
	}
	if code, _, _ := runCLI(t, dir, nil, "import", "a/bench.txt", "--id", "x"); code != ExitOK {
		t.Fatalf("import --id x: exit %d", code)
	}
	code, _, errOut = runCLI(t, dir, nil, "import", "b/bench.txt", "--id", "x")
	if code == ExitOK || !strings.Contains(errOut, "already stored") {
		t.Errorf("import --id x again: exit %d, want an 'already stored' error\n%s", code, errOut)
	}
}

// A run killed before it finished leaves a run.json without finished_at: import records it,
// marked partial, with every scenario it holds. Another run.json with the same id (the old
// per-second ids, or a copy) gets a new id instead of replacing it.
func TestImportKilledRun(t *testing.T) {
	dir := t.TempDir()
	r := storetest.MakeRun("20261122_143005", storetest.T0, 1, 10, []string{"resnet"}, 3, 20)
	r.FinishedAt, r.Partial = time.Time{}, false // as if killed between two writes of a writer that had not marked it
	p := filepath.Join(dir, "killed")
	os.MkdirAll(p, 0o755)
	if err := result.Save(p, r); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, dir, nil, "import", "killed/run.json")
	if code != ExitOK || strings.TrimSpace(out) != r.ID || !strings.Contains(errOut, "partial") {
		t.Fatalf("import killed/run.json: exit %d\n%s%s", code, out, errOut)
	}
	infos := storedRuns(t, filepath.Join(dir, store.DefaultPath))
	if len(infos) != 1 || !infos[0].Partial || infos[0].Scenarios != 3 {
		t.Fatalf("stored %+v, want one partial run of 3 scenarios", infos)
	}
	code, out, errOut = runCLI(t, dir, nil, "import", "killed/run.json")
	if code != ExitOK || strings.TrimSpace(out) == r.ID || !strings.Contains(errOut, "was taken") {
		t.Errorf("second import: exit %d, want a new id\n%s%s", code, out, errOut)
	}
	if infos := storedRuns(t, filepath.Join(dir, store.DefaultPath)); len(infos) != 2 {
		t.Errorf("%d runs stored after a second import, want 2", len(infos))
	}
}

// A killed run's scenarios since its last rewrite of run.json are in the folder's journal:
// import reads them too, given the run.json or the folder. Before, import read run.json alone
// (a run of 200 scenarios killed on a full disk imported 61).
func TestImportKilledRunWithJournal(t *testing.T) {
	dir := t.TempDir()
	r := storetest.MakeRun("20261122_143005-journal", storetest.T0, 1, 10, []string{"resnet"}, 5, 20)
	r.FinishedAt, r.Partial = time.Time{}, true
	later := r.Scenarios[2:]
	r.Scenarios = r.Scenarios[:2]
	r.Tally()
	p := filepath.Join(dir, "killed")
	os.MkdirAll(p, 0o755)
	if err := result.Save(p, r); err != nil {
		t.Fatal(err)
	}
	j, err := recovery.OpenJournal(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range later {
		if err := j.Add(&later[i]); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	for i, arg := range []string{"killed/run.json", "killed"} {
		code, out, errOut := runCLI(t, dir, nil, "import", arg)
		if code != ExitOK || !strings.Contains(errOut, ", 5 scenarios") || !strings.Contains(errOut, "(partial") {
			t.Fatalf("import %s: exit %d, want 5 scenarios, partial\n%s%s", arg, code, out, errOut)
		}
		infos := storedRuns(t, filepath.Join(dir, store.DefaultPath))
		if len(infos) != i+1 || infos[i].Scenarios != 5 || !infos[i].Partial {
			t.Fatalf("import %s: stored %+v, want a partial run of 5 scenarios", arg, infos)
		}
	}
}

// compare, its JUnit and markdown outputs, and run --baseline fail when the new side measured
// nothing comparable, with the reason in one line. Before, each of these exited 0 ("ok").
func TestNoFalsePass(t *testing.T) {
	dir := t.TempDir()
	saveRun(t, dir, "old", 1, 10)
	empty := &result.Run{Schema: result.Schema, ID: "empty", Partial: true, StartedAt: storetest.T0, Scenarios: []result.Scenario{}}
	os.MkdirAll(filepath.Join(dir, "benchmark_results", "empty"), 0o755)
	if err := result.Save(filepath.Join(dir, "benchmark_results", "empty"), empty); err != nil {
		t.Fatal(err)
	}
	allFailed := storetest.MakeRun("allfailed", storetest.T0, 2, 10, []string{"resnet"}, 2, 30)
	for i := range allFailed.Scenarios {
		allFailed.Scenarios[i].Status, allFailed.Scenarios[i].Metrics = result.StatusFailed, nil
	}
	allFailed.Tally()
	os.MkdirAll(filepath.Join(dir, "benchmark_results", "allfailed"), 0o755)
	result.Save(filepath.Join(dir, "benchmark_results", "allfailed"), allFailed)
	renamed := storetest.MakeRun("renamed", storetest.T0, 3, 10, []string{"resnet"}, 2, 30)
	for i := range renamed.Scenarios {
		renamed.Scenarios[i].Params = map[string]any{"batchsize": i}
	}
	os.MkdirAll(filepath.Join(dir, "benchmark_results", "renamed"), 0o755)
	result.Save(filepath.Join(dir, "benchmark_results", "renamed"), renamed)

	for _, c := range []struct{ newRun, want string }{
		{"empty", "partial (interrupted) with no scenario"},
		{"allfailed", "no scenario of the new run allfailed succeeded"},
		{"renamed", "a typo in --set or a renamed parameter"},
	} {
		code, out, errOut := runCLI(t, dir, nil, "compare", "old", c.newRun)
		if code != ExitError || !strings.Contains(errOut, "nothing comparable: ") || !strings.Contains(errOut, c.want) || strings.Contains(out, "\nok:") {
			t.Errorf("compare old %s: exit %d, want 1 and %q\n%s%s", c.newRun, code, c.want, out, errOut)
		}
		if lines := strings.Count(strings.TrimSpace(errOut), "\n") + 1; lines != 1 {
			t.Errorf("compare old %s: the reason takes %d lines on stderr, want 1:\n%s", c.newRun, lines, errOut)
		}
		code, out, _ = runCLI(t, dir, nil, "compare", "old", c.newRun, "--format", "junit")
		if code != ExitError || !strings.Contains(out, `type="no-evidence"`) || !strings.Contains(out, `failures="1"`) {
			t.Errorf("compare old %s --format junit: exit %d, want a failed case\n%s", c.newRun, code, out)
		}
		code, out, _ = runCLI(t, dir, nil, "compare", "old", c.newRun, "--format", "markdown")
		if code != ExitError || !strings.Contains(out, "❌ nothing comparable") || strings.Contains(out, "✅") {
			t.Errorf("compare old %s --format markdown: exit %d\n%s", c.newRun, code, out)
		}
	}

	// run --baseline: the baseline measured exec "a"; a run of a renamed benchmark matches none.
	store := filepath.Join(dir, "h.db")
	if code, _, errOut := runCLI(t, dir, nil, "run", "--exec", "true", "--name", "a", "--iterations", "3", "--warmup", "0", "--no-monitor", "--store", store, "--format", "none"); code != ExitOK {
		t.Fatalf("run a: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := runCLI(t, dir, nil, "baseline", "set", "main", "latest", "--store", store); code != ExitOK {
		t.Fatalf("baseline set: exit %d\n%s", code, errOut)
	}
	code, out, errOut := runCLI(t, dir, nil, "run", "--exec", "true", "--name", "b", "--iterations", "3", "--warmup", "0", "--no-monitor", "--store", store, "--format", "none", "--baseline", "main")
	if code != ExitError || !strings.Contains(errOut, "baseline main: nothing comparable: no scenario of the new run") {
		t.Errorf("run --baseline main of another benchmark: exit %d, want 1 with the reason\n%s%s", code, out, errOut)
	}

	// An unknown --set key is a usage error naming it, with a hint.
	code, _, errOut = runCLI(t, dir, nil, "run", filepath.Join(testdata, "project"), "--enable-mock", "--set", "batchsize=4", "--dry-run")
	if code != ExitUsage || !strings.Contains(errOut, `--set "batchsize=4": no selected benchmark has a parameter "batchsize"`) {
		t.Errorf("--set batchsize=4: exit %d, want 2\n%s", code, errOut)
	}
}

// No secret is written anywhere: a URL password, a bearer token given as a flag, an API key a
// server echoes back in its error body, and the values of a definition's `headers:` (an
// X-Api-Key, an "Authorization: Token ..." the server echoes) appear in none of the run's files,
// the store, stdout or stderr. Before, config.args kept --metrics-token and the URL password, the
// echoed key was in run.json's errors, run.log, requests/*.jsonl, report.html and the store, and
// the headers' values were in all of them and on stdout.
func TestNoSecretWritten(t *testing.T) {
	const (
		apiKey    = "sk-live-0123456789abcdef"
		urlPass   = "urlpass-9876"
		token     = "metrics-tok-4242"
		storePwd  = "pgpass-1357"
		headerKey = "K3yValue9988xx"
		headerTok = "AuTh7766zzqq"
		serverTok = "hf-tok-5511aa" // a launched server's environment
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A hostile or careless server: it echoes the credentials it got.
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error": {"message": "Incorrect API key provided: %s (auth %q, url %s, key %s, token %s)"}}`, apiKey, r.Header.Get("Authorization"), "http://user:"+urlPass+"@x",
			r.Header.Get("X-Api-Key"), strings.TrimPrefix(r.Header.Get("Authorization"), "Token "))
	}))
	defer srv.Close()
	dir := t.TempDir()
	t.Setenv("MY_LLM", apiKey) // the openai subject reads the process's environment
	base := strings.Replace(srv.URL, "http://", "http://user:"+urlPass+"@", 1) + "/v1"
	code, out, errOut := runCLI(t, dir, []string{"MY_LLM=" + apiKey},
		"run", "--openai", base, "--model", "m", "--api-key-env", "MY_LLM", "--requests", "3", "--concurrency", "1",
		"--metrics-addr", "127.0.0.1:0", "--metrics-token", token, "--no-monitor", "--output-dir", "out", "--store", "h.db")
	if code == ExitOK {
		t.Fatalf("a run whose every request failed exited 0\n%s%s", out, errOut)
	}
	// A definition whose openai subject sends credentials as headers, and whose server (here a
	// shell that prints its environment) has a token in its env: the user wrote them in the
	// definition (kept outside dir), nothing else may.
	defs := t.TempDir()
	os.MkdirAll(filepath.Join(defs, "benches"), 0o755)
	def := fmt.Sprintf(`name: hdr
server:
  command: [sh, -c, 'echo "token is $HF_TOKEN"; echo "key $HF_TOKEN" >&2; exec sleep 30']
  ready: tcp://%s
  env: {HF_TOKEN: %s}
subject:
  kind: openai
  url: %s/v1
  model: m
  stream: false
  headers: {X-Api-Key: %s, Authorization: "Token %s"}
load: {mode: concurrency, concurrency: 1, warmup_iterations: 0, measurement_iterations: 3}
`, strings.TrimPrefix(srv.URL, "http://"), serverTok, srv.URL, headerKey, headerTok)
	os.WriteFile(filepath.Join(defs, "benches", "hdr.yaml"), []byte(def), 0o644)
	code, out2, errOut2 := runCLI(t, dir, nil, "run", defs, "--no-monitor", "--output-dir", "out2", "--store", "h.db", "--log-level", "debug")
	if code == ExitOK {
		t.Fatalf("a definition's run whose every request failed exited 0\n%s%s", out2, errOut2)
	}
	out, errOut = out+out2, errOut+errOut2
	secrets := []string{apiKey, urlPass, token, storePwd, headerKey, headerTok, serverTok}
	check := func(where, text string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds the secret %q", where, s)
			}
		}
	}
	check("stdout", out)
	check("stderr", errOut)
	files := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := os.ReadFile(p)
		check(p, string(data))
		files++
		return nil
	})
	if files < 5 {
		t.Errorf("only %d files written; want run.json, run.log, summary.csv, requests/, report.html and the store", files)
	}
	r, err := result.Load(filepath.Join(dir, "out", result.LatestLink))
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(r.Config.Args, " "); !strings.Contains(args, "--metrics-token xxxxx") || !strings.Contains(args, "user:xxxxx@") {
		t.Errorf("config.args %q: want the token and the URL password masked", args)
	}
	if len(r.Scenarios) == 0 || len(r.Scenarios[0].Errors) == 0 || !strings.Contains(r.Scenarios[0].Errors[0].Error, "Incorrect API key provided") {
		t.Errorf("the server's error should be kept, redacted: %+v", r.Scenarios)
	}
	// A store URL's password in an error message.
	code, _, errOut = runCLI(t, dir, nil, "history", "--runs", "--store", "postgres://u:"+storePwd+"@127.0.0.1:1/x?connect_timeout=1")
	if code == ExitOK {
		t.Errorf("history on an unreachable store exited 0")
	}
	check("stderr of history --store postgres://...", errOut)
}

// baseline set of a run folder whose id another stored run holds records the folder's run under
// a new id instead of pointing the baseline at the other run; a folder already stored is not
// stored twice. Before, the baseline silently pointed at the stored run of the same id.
func TestBaselineSetSameIDOtherRun(t *testing.T) {
	dir := t.TempDir()
	saveRun(t, dir, "r1", 1, 10) // benchmark_results/r1: resnet, 2 scenarios
	if code, _, errOut := runCLI(t, dir, nil, "import", "benchmark_results/r1/run.json"); code != ExitOK {
		t.Fatalf("import: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := runCLI(t, dir, nil, "baseline", "set", "same", "r1"); code != ExitOK || !strings.Contains(out, "= run r1 ") {
		t.Fatalf("baseline set same r1: exit %d\n%s%s", code, out, errOut)
	}
	// Another host's run with the same (old, per-second) id.
	other := storetest.MakeRun("r1", storetest.T0.Add(time.Hour), 9, 20, []string{"bert"}, 3, 30)
	p := filepath.Join(dir, "elsewhere", "r1")
	os.MkdirAll(p, 0o755)
	if err := result.Save(p, other); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, dir, nil, "baseline", "set", "main", "elsewhere/r1")
	if code != ExitOK || strings.Contains(out, "= run r1 ") || !strings.Contains(out, "(3 scenarios)") {
		t.Fatalf("baseline set main elsewhere/r1: exit %d, want a new id for the other run\n%s%s", code, out, errOut)
	}
	if infos := storedRuns(t, filepath.Join(dir, store.DefaultPath)); len(infos) != 2 {
		t.Errorf("%d runs stored, want 2 (r1 and the other run under a new id)", len(infos))
	}
	code, out, _ = runCLI(t, dir, nil, "baseline", "show", "main")
	if code != ExitOK || !strings.Contains(out, "bert/") || strings.Contains(out, "resnet/") {
		t.Errorf("baseline main shows the wrong run: exit %d\n%s", code, out)
	}
}

// A run recorded by an older version with a secret in it (config.args, an echoed key) is shown
// redacted by the commands that read runs back (report, compare). Before, report.html held them.
func TestReadBackRunsRedacted(t *testing.T) {
	dir := t.TempDir()
	r := storetest.MakeRun("old", storetest.T0, 1, 10, []string{"resnet"}, 1, 10)
	r.Config.Args = []string{"run", "--metrics-token", "tok-secret-77", "--openai", "http://u:urlpw-88@h/v1"}
	r.Scenarios[0].Errors = []result.IterationError{{Error: "401: Incorrect API key provided: sk-abcdef0123456789"}}
	p := filepath.Join(dir, "benchmark_results", "old")
	os.MkdirAll(p, 0o755)
	if err := result.Save(p, r); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, dir, nil, "report", "old", "-o", "x.html"); code != ExitOK {
		t.Fatalf("report: exit %d\n%s", code, errOut)
	}
	html, _ := os.ReadFile(filepath.Join(dir, "x.html"))
	_, out, _ := runCLI(t, dir, nil, "compare", "old", "old", "--format", "json")
	for _, s := range []string{"tok-secret-77", "urlpw-88", "sk-abcdef0123456789"} {
		if strings.Contains(string(html), s) {
			t.Errorf("report.html holds %q", s)
		}
		if strings.Contains(out, s) {
			t.Errorf("compare --format json prints %q", s)
		}
	}
}

// A 10× slower command measured in one iteration a side cannot be tested: compare exits 1 with
// "too few samples to test", the change, its samples and how many are needed, not 0 as a pass
// (before: exit 0, "UNTESTED" in the verdict and a note on stderr); --strict keeps its rule
// (exit 3); run --baseline likewise exits 1.
func TestTooFewSamplesNoPass(t *testing.T) {
	dir := t.TempDir()
	var runs []string
	store := filepath.Join(dir, "h.db")
	for _, cmd := range []string{"sleep 0.002", "sleep 0.05"} {
		code, _, errOut := runCLI(t, dir, nil, "run", "--exec", cmd, "--name", "s", "--iterations", "1", "--warmup", "0", "--store", store, "--format", "none", "--no-monitor")
		if code != 0 {
			t.Fatalf("run %s: exit %d %s", cmd, code, errOut)
		}
		latest, err := filepath.EvalSymlinks(filepath.Join(dir, "benchmark_results", "latest"))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, latest)
	}
	code, out, errOut := runCLI(t, dir, nil, "compare", runs[0], runs[1])
	if code != ExitError || !strings.Contains(errOut, "too few samples to test: 1 gated change(s)") || !strings.Contains(errOut, "latency_ms") ||
		!strings.Contains(errOut, "with 1 and 1 samples") || !strings.Contains(errOut, "at least 4 samples a side") {
		t.Errorf("compare: exit %d, want 1 saying too few samples\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, dir, nil, "compare", runs[0], runs[1], "--strict"); code != ExitRegression {
		t.Errorf("compare --strict: exit %d, want 3\n%s", code, errOut)
	}
	if code, _, errOut := runCLI(t, dir, nil, "baseline", "set", "fast", filepath.Base(runs[0]), "--store", store); code != 0 {
		t.Fatalf("baseline set: exit %d %s", code, errOut)
	}
	code, _, errOut = runCLI(t, dir, nil, "run", "--exec", "sleep 0.05", "--name", "s", "--iterations", "1", "--warmup", "0", "--format", "none", "--no-monitor", "--baseline", "fast", "--store", store)
	if code != ExitError || !strings.Contains(errOut, "too few samples to test") {
		t.Errorf("run --baseline: exit %d, want 1 saying too few samples\n%s", code, errOut)
	}
}
