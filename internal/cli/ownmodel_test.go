package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

// TestPageCommands runs the pages that walk a new user through a project of their own as they
// would: the files a page shows are its project's (under examples/), and each command of its sh
// blocks runs as written in a copy of the project (a `make` line is left to the Makefile's own
// tests: TestExampleSuite runs make demo's command).
func TestPageCommands(t *testing.T) {
	for _, c := range []struct {
		page, project string
		files         int
		python        func(*testing.T) string // the interpreter the project needs
		ran           string                  // the scenarios the last run ran (seedIDs: sorted)
	}{
		{"docs/own-model.md", "own-model", 2, torchPython, "mlp/batch_size=1 ok,mlp/batch_size=32 ok"},
		{"docs/getting-started.md", "first-definition", 2, nil, "my-model/batch_size=1 ok,my-model/batch_size=32 ok,my-model/batch_size=8 ok"},
	} {
		t.Run(c.project, func(t *testing.T) {
			files, commands := pageBlocks(t, c.page)
			project := filepath.Join("..", "..", "examples", c.project)
			dir := t.TempDir()
			for path, body := range files {
				got, err := os.ReadFile(filepath.Join(project, path))
				if err != nil || string(got) != body {
					t.Errorf("%s shows %s, which is not examples/%s/%s (%v)", c.page, path, c.project, path, err)
				}
				os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755)
				os.WriteFile(filepath.Join(dir, path), got, 0o644)
			}
			if len(files) != c.files || len(commands) == 0 {
				t.Fatalf("%s shows %d files and %d commands", c.page, len(files), len(commands))
			}
			var env []string
			if c.python != nil {
				env = append(env, "INFERBENCH_PYTHON="+c.python(t))
			}
			for _, cmd := range commands {
				args := strings.Fields(cmd)
				if args[0] == "cd" || args[0] == "make" {
					continue
				}
				if args[0] != "inferbench" {
					t.Fatalf("%s shows %q, which this test does not run", c.page, cmd)
				}
				if i := slices.Index(args, "#"); i > 0 {
					args = args[:i]
				}
				code, out, errOut := runCLI(t, dir, env, args[1:]...)
				if code != 0 {
					t.Fatalf("%s: exit %d\n%s%s", cmd, code, out, errOut)
				}
			}
			r, err := result.Load(filepath.Join(dir, "benchmark_results", result.LatestLink, "run.json"))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(seedIDs(r), ","); got != c.ran {
				t.Fatalf("ran %q, want %q", got, c.ran)
			}
			for _, s := range r.Scenarios {
				if v, ok := s.Metrics["throughput_ips"].Center(); !ok || v <= 0 {
					t.Errorf("%s: no throughput", s.ID())
				}
			}
		})
	}
}
