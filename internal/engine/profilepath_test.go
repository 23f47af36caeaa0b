package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/subject"
)

// absProfiler writes its profile where a worker does: under the absolute form of the folder.
type absProfiler struct{ badSetup }

func (absProfiler) Profile(ctx context.Context, dir string, n int) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	f := filepath.Join(abs, "python.prof")
	return []string{f}, os.WriteFile(f, []byte("x"), 0o644)
}

func init() {
	subject.Register(subject.Kind{Name: "test-absprofile", Open: func(context.Context, subject.Spec) (subject.Subject, error) { return absProfiler{}, nil }})
}

// TestProfilePathsRelative: under the default relative output folder, a profile's path in the
// results is relative to the run folder, so report.html's links survive the folder's upload as a
// CI artifact (issue 23: the worker's absolute paths were kept).
func TestProfilePathsRelative(t *testing.T) {
	scs := scenarios(t, "name: p\nsubject: {kind: test-absprofile}\nload: {warmup_iterations: 0, measurement_iterations: 2}\n")
	t.Chdir(t.TempDir())
	s := runAll(t, engine.New(engine.WithProfile(filepath.Join("benchmark_results", "r1", "profiles"), 1)), scs).Scenarios[0]
	if len(s.Profiles) != 1 || filepath.IsAbs(s.Profiles[0]) || !strings.HasPrefix(s.Profiles[0], "profiles/") {
		t.Fatalf("profiles %q: want a path relative to the run folder, profiles/...", s.Profiles)
	}
	if _, err := os.Stat(filepath.Join("benchmark_results", "r1", s.Profiles[0])); err != nil {
		t.Errorf("the path does not name the file from the run folder: %v", err)
	}
}
