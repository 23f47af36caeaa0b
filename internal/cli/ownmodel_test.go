package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/testkit/require"
	"github.com/inferbench/inferbench/result"
)

// pageBlocks returns a docs page's fenced code blocks: the files it shows (a block whose first
// line is a comment naming a path, "# benches/mlp.py") and the lines of its sh blocks.
func pageBlocks(t *testing.T, page string) (files map[string]string, commands []string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", page))
	if err != nil {
		t.Fatal(err)
	}
	files = map[string]string{}
	fence := regexp.MustCompile("(?ms)^```(\\w+)\\n(.*?)^```\\n")
	for _, m := range fence.FindAllStringSubmatch(string(doc), -1) {
		lang, body := m[1], m[2]
		if lang == "sh" {
			for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
				commands = append(commands, strings.TrimSpace(line))
			}
			continue
		}
		first, rest, _ := strings.Cut(body, "\n")
		if path, ok := strings.CutPrefix(first, "# "); ok && strings.Contains(path, "/") {
			files[path] = rest
		}
	}
	return files, commands
}

// torchPython returns an interpreter that imports torch (the project's .venv, then Debian's), or
// skips.
func torchPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"../../.venv/bin/python", "/usr/bin/python3"} {
		abs, _ := filepath.Abs(p)
		if exec.Command(abs, "-c", "import torch").Run() == nil {
			return abs
		}
	}
	require.Skipf(t, require.Frameworks, "no interpreter here imports torch (.venv, /usr/bin/python3): make venv")
	return ""
}

// TestOwnModelPage runs docs/own-model.md as a new user would: the files it shows are the
// project's (examples/own-model), and each command of its sh block runs as written in a copy of
// the project, the class measured at each batch size of the definition and only there.
func TestOwnModelPage(t *testing.T) {
	files, commands := pageBlocks(t, "docs/own-model.md")
	project := filepath.Join("..", "..", "examples", "own-model")
	dir := t.TempDir()
	for path, body := range files {
		got, err := os.ReadFile(filepath.Join(project, path))
		if err != nil || string(got) != body {
			t.Errorf("docs/own-model.md shows %s, which is not examples/own-model/%s (%v)", path, path, err)
		}
		os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755)
		os.WriteFile(filepath.Join(dir, path), got, 0o644)
	}
	if len(files) != 2 || len(commands) == 0 {
		t.Fatalf("the page shows %d files and %d commands", len(files), len(commands))
	}
	env := []string{"INFERBENCH_PYTHON=" + torchPython(t)}
	for _, c := range commands {
		args := strings.Fields(c)
		if args[0] == "cd" {
			continue
		}
		if args[0] != "inferbench" {
			t.Fatalf("the page shows %q, which this test does not run", c)
		}
		code, out, errOut := runCLI(t, dir, env, args[1:]...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", c, code, out, errOut)
		}
		if args[1] == "list" && (!strings.Contains(out, "batch_size=32") || strings.Contains(out, "MLPBenchmark")) {
			t.Errorf("%s lists the class on its own, or not the definition's scenarios:\n%s", c, out)
		}
	}
	r, err := result.Load(filepath.Join(dir, "benchmark_results", result.LatestLink, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := seedIDs(r); strings.Join(got, ",") != "mlp/batch_size=1 ok,mlp/batch_size=32 ok" {
		t.Fatalf("ran %q", got)
	}
	for _, s := range r.Scenarios {
		if v, ok := s.Metrics["throughput_ips"].Center(); !ok || v <= 0 {
			t.Errorf("%s: no throughput", s.ID())
		}
	}
}
