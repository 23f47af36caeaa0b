package main

import (
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kballard/go-shellquote"

	"github.com/inferbench/inferbench/internal/mockserver"
)

// readmeSubset restricts the README lines that would run long here to part of what they run,
// keyed by the line's first words (the README says so below its block): the instruction-mode run
// to one Go function and 3 iterations (the whole suite under valgrind takes many minutes), the
// paired run to one command scenario and 10 s, the capacity search to 3 short steps.
var readmeSubset = map[string][]string{
	"run --measure instructions": {"--include", "go-sha256", "--iterations", "3"},
	"run --baseline-ref":         {"--include", "python-matmul/n=16", "--max-time", "10s"},
	"capacity":                   {"--start-rate", "40", "--min-requests", "40", "--max-requests", "80", "--max-steps", "3"},
}

// TestReadmeCommands runs the README's "Using it" block as a new user would: each line in order,
// in a copy of the bundled suite (benches/) in a git clone whose origin has main, with a
// model.py for the --exec line; URL is a mockserver's. Every line must exit 0, or 3 for
// the bundled latency budgets alone (a loaded machine) (issue 42: the
// README's explain line always failed).
func TestReadmeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's commands on the bundled suite")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)## Using it\n.*?```sh\n(.*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README.md: no sh block under \"## Using it\"")
	}
	bin := build(t)
	dir := readmeProject(t)
	srv := httptest.NewServer(mockserver.New(mockserver.Config{Capacity: mockserver.Capacity{Slots: 4, PrefillMs: 8, TokenMs: 4, BatchSlowdown: 0.1}}).Handler())
	t.Cleanup(srv.Close)
	for _, line := range strings.Split(strings.TrimSpace(string(block[1])), "\n") {
		cmdline, _, _ := strings.Cut(line, "  #")
		words, err := shellquote.Split(strings.ReplaceAll(cmdline, " URL ", " "+srv.URL+"/v1 "))
		if err != nil || len(words) < 2 || words[0] != "inferbench" {
			t.Fatalf("README line %q is no inferbench command (%v)", line, err)
		}
		args := words[1:]
		for prefix, extra := range readmeSubset {
			if strings.HasPrefix(strings.Join(args, " "), prefix) {
				args = append(args, extra...)
			}
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "INFERBENCH_STORE=sqlite:"+filepath.Join(dir, "history.db"))
		began := time.Now()
		out, err := cmd.CombinedOutput()
		t.Logf("%.1f s: inferbench %s", time.Since(began).Seconds(), strings.Join(args, " "))
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee) && ee.ExitCode() == 3 && budgetsOnly.Match(out):
			// The bundled budgets are on latencies: a loaded machine exceeds them, which is
			// the tool working (as TestExampleSuite takes it).
			t.Logf("%s: budgets exceeded on this machine now", strings.TrimSpace(cmdline))
		case err != nil:
			t.Errorf("%s: %v\n%s", strings.TrimSpace(cmdline), err, tail(out, 2000))
		}
	}
}

// readmeProject makes the project the README's lines run in: benches/ and a model.py committed in
// a clone of a bare origin (origin/main exists).
func readmeProject(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	origin, dir := filepath.Join(root, "origin.git"), filepath.Join(root, "project")
	if err := os.CopyFS(filepath.Join(dir, "benches"), os.DirFS("../../benches")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.py"), []byte("sum(i * i for i in range(200000))\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git := func(in string, args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = in
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(root, "init", "-q", "--bare", origin)
	git(dir, "init", "-q")
	git(dir, "add", "-A")
	git(dir, "commit", "-qm", "benches")
	git(dir, "remote", "add", "origin", origin)
	git(dir, "push", "-q", "origin", "HEAD:main")
	git(dir, "fetch", "-q", "origin")
	return dir
}
