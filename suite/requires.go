package suite

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/subject"
)

// Requirement kinds, as written in `requires:`.
//
//	python-module:NAME   the worker interpreter can import NAME
//	command:NAME         NAME is on PATH
//	env:NAME             the environment variable NAME is set
//	file:PATH            PATH exists (relative to the definition)
//	gpu                  an NVIDIA GPU answers nvidia-smi
var requirementKinds = []string{"python-module", "command", "env", "file", "gpu"}

func parseRequirement(r string) (kind, arg string, err error) {
	kind, arg, _ = strings.Cut(r, ":")
	if !slices.Contains(requirementKinds, kind) {
		return "", "", fmt.Errorf("unknown requirement %q (kinds: %s)%s", r, strings.Join(requirementKinds, ", "), hintSuffix(kind, requirementKinds))
	}
	if kind != "gpu" && arg == "" {
		return "", "", fmt.Errorf("requirement %q needs a name after the colon", r)
	}
	return kind, arg, nil
}

func hintSuffix(s string, c []string) string {
	if h := hint(s, c); h != "" {
		return " (" + h + ")"
	}
	return ""
}

// Checker answers requirements, caching each answer for the life of the Checker.
type Checker struct {
	// Python is the interpreter asked about python-module requirements (default: $INFERBENCH_PYTHON, else the active virtual
	// environment's, else python3 on PATH, else /usr/bin/python3).
	Python string
	// LookupEnv reads the environment (os.LookupEnv when nil).
	LookupEnv func(string) (string, bool)
	// EnableMock lets mock subjects run; otherwise they are skipped.
	EnableMock bool

	mu    sync.Mutex
	cache map[string]string
}

// Check returns the reason s will be skipped, or "" when it can run.
func (c *Checker) Check(s *Scenario) string {
	if s.Skip != "" {
		return s.Skip
	}
	b := s.Benchmark
	if b.Kind == "mock" && !c.EnableMock {
		return "mock subject: pass --enable-mock to run simulated models"
	}
	if mockFile(b.File) && !c.EnableMock {
		return filepath.Base(b.File) + " is a mock benchmark: pass --enable-mock to run it"
	}
	reqs := append([]string(nil), b.Requires...)
	if k, ok := subject.Lookup(b.Kind); ok && k.Requires != nil {
		reqs = append(reqs, k.Requires(b.Config, s.Params)...)
	}
	for _, r := range reqs {
		if why := c.check(r, b.Dir); why != "" {
			return why
		}
	}
	return ""
}

func (c *Checker) check(r, dir string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := dir + "\x00" + r
	if why, ok := c.cache[key]; ok {
		return why
	}
	why := c.answer(r, dir)
	if c.cache == nil {
		c.cache = map[string]string{}
	}
	c.cache[key] = why
	return why
}

func (c *Checker) answer(r, dir string) string {
	kind, arg, err := parseRequirement(r)
	if err != nil {
		return err.Error()
	}
	lookup := c.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	switch kind {
	case "command":
		if _, err := exec.LookPath(arg); err != nil {
			return fmt.Sprintf("requires command %s: not on PATH", arg)
		}
	case "env":
		if v, ok := lookup(arg); !ok || v == "" {
			return fmt.Sprintf("requires environment variable %s: not set", arg)
		}
	case "file":
		p := arg
		if !strings.HasPrefix(p, "/") {
			p = dir + "/" + p
		}
		if _, err := os.Stat(p); err != nil {
			return fmt.Sprintf("requires file %s: %v", arg, err)
		}
	case "python-module":
		py := c.Python
		if py == "" {
			py = pyenv.Find(lookup).Path
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		script := "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 3)"
		err := exec.CommandContext(ctx, py, "-c", script, arg).Run()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
				return fmt.Sprintf("requires Python module '%s': not importable by %s (install it, or run with the interpreter that has it: INFERBENCH_PYTHON or subject.python)", arg, py)
			}
			return fmt.Sprintf("requires Python module %s: %s did not answer: %v", arg, py, err)
		}
	case "gpu":
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "nvidia-smi", "-L").Output()
		if err != nil || !strings.Contains(string(out), "GPU") {
			return "requires an NVIDIA GPU: nvidia-smi found none"
		}
	}
	return ""
}

// mockFile reports whether path is a Python benchmark file named as a mock (mock_benchmark.py,
// mock.py, llm_mock.py): a mock benchmark is "skipped by default" in the scripts that ship one,
// and runs only with --enable-mock, like a definition whose subject is the simulated model.
func mockFile(path string) bool {
	if filepath.Ext(path) != ".py" {
		return false
	}
	stem := strings.TrimSuffix(filepath.Base(path), ".py")
	return stem == "mock" || strings.HasPrefix(stem, "mock_") || strings.HasSuffix(stem, "_mock")
}
