package cli

import (
	"context"
	"encoding/json"
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
)

// Two commands A/B'd through their own timing (exec JSON): B three times slower is a regression
// (exit 3) with the ratio and its interval; the same command against itself passes.
func TestABCommands(t *testing.T) {
	fast := `exec:echo '{"latency_ms": 10}'`
	slow := `exec:echo '{"latency_ms": 30}'`
	code, out, errOut := runCLI(t, "", nil, "ab", fast, slow, "--exec-metrics", "--block-calls", "3", "--warmup", "1") // sequential: 16 pairs decide a constant 3x
	if code != ExitRegression || !strings.Contains(out, "B/A = 3.0000") || !strings.Contains(out, "REGRESSION") {
		t.Fatalf("ab fast slow: exit %d, want 3 with B/A = 3\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", nil, "ab", fast, fast, "--exec-metrics", "--block-calls", "3", "--format", "json")
	var r ab.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != ExitOK || r.Verdict != compare.Unchanged || r.Answer != ab.AnswerSame || r.Ratio != 1 || r.Pairs != 16 || len(r.Blocks) != 32 {
		t.Fatalf("ab fast fast: exit %d, %v, %+v\n%s", code, err, r, errOut)
	}
	if code, _, errOut := runCLI(t, "", nil, "ab", fast, "nosuch/bench"); code != ExitUsage || !strings.Contains(errOut, "nosuch/bench") {
		t.Errorf("ab with an unknown variant: exit %d, want 2 naming it\n%s", code, errOut)
	}
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
	if code != ExitRegression || !strings.Contains(out, "B/A = 1.1000") {
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
	code, out, errOut := runCLI(t, "", nil, "ab", "openai:"+urls[0], "openai:"+urls[1], "--model", "mock", "--metric", "ttft_ms",
		"--pairs", "8", "--block-calls", "3", "--warmup", "1") // 8: with 3 df one block slowed by a loaded machine hid a 6x change (p = 0.03)
	if code != ExitRegression || !strings.Contains(out, "ttft_ms (ms, better: lower)") {
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
}
