package worker

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferbench/inferbench/subject"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestProjectRootImportable runs seed-style benchmarks that import their project's own modules
// from the project root: seed 004's benches/*.py do `from framework import ...` (framework.py at
// the root), seed 000's do `from src.pkg.mod import ...`. Both failed with ModuleNotFoundError
// before the worker put the project root on PYTHONPATH.
func TestProjectRootImportable(t *testing.T) {
	needPython(t)
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"requirements.txt":                  "",
		"framework.py":                      "def scale(x):\n    return 3 * x\n",
		"src/inference_pio/test_utils.py":   "def assert_true(v):\n    assert v\n    return 7\n",
		"benches/llama_benchmark.py":        "from framework import scale\n\ndef run_scaled():\n    return scale(2)\n",
		"benches/deep/suite/bench_utils.py": "from src.inference_pio.test_utils import assert_true\n\ndef run_checked():\n    return assert_true(True)\n",
	})
	cases := []struct {
		dir, file, fn string
		want          float64
	}{
		{"benches", "llama_benchmark.py", "run_scaled", 6},         // seed 004
		{"benches/deep/suite", "bench_utils.py", "run_checked", 7}, // seed 000
	}
	for _, c := range cases {
		c := c
		t.Run(c.fn, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cfg := Config{Adapter: "pyfunc", Path: pythonDir(t)}
			spec := subject.Spec{Benchmark: "t", Dir: filepath.Join(root, c.dir),
				Params: subject.Params{"file": c.file, "function": c.fn}}
			w, err := OpenConfig(ctx, cfg, spec, nil)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer w.Close()
			obs, err := w.DoBatch(ctx, subject.Request{}, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := obs[0].Values["result"]; got != c.want {
				t.Errorf("result = %v, want %v", got, c.want)
			}
		})
	}
}
