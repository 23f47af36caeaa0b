// Package require turns the skips of tests that need something outside Go (a framework's
// Python module, llama.cpp's server) into failures where the environment says it holds them:
// INFERBENCH_REQUIRE, a comma-separated list of what must be there (frameworks, trackers,
// llama-server, or all). Unset, such a test skips with its reason, as on a developer's machine
// without the frameworks; CI sets it (the Makefile's test targets, when .venv and the
// llama-server build exist), so that a wheel that does not import or a venv that is not picked up fails the run
// instead of leaving it green with every framework test skipped.
//
// The Python tests read the same variable (workers/python/tests/test_frameworks.py).
package require

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// What the tests can require.
const (
	Frameworks  = "frameworks"   // the framework modules of requirements.txt (torch, gguf, ...)
	Trackers    = "trackers"     // the experiment trackers of requirements-trackers.txt (mlflow, wandb)
	LlamaServer = "llama-server" // llama.cpp's server binary
	Valgrind    = "valgrind"     // valgrind, for instruction mode (--measure instructions)
)

// Env is the environment variable that lists what is required.
const Env = "INFERBENCH_REQUIRE"

// Required reports whether INFERBENCH_REQUIRE names what (or "all").
func Required(what string) bool {
	list := strings.Split(os.Getenv(Env), ",")
	for i := range list {
		list[i] = strings.TrimSpace(list[i])
	}
	return slices.Contains(list, what) || slices.Contains(list, "all")
}

// Skipf skips the test with the reason, or fails it when what is required.
func Skipf(t testing.TB, what, format string, args ...any) {
	t.Helper()
	if Required(what) {
		t.Fatalf(Env+" has %s: "+format, append([]any{what}, args...)...)
		return
	}
	t.Skipf(format, args...)
}
