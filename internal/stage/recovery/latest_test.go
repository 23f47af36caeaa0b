package recovery

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// TestLinkLatestConcurrent: runs that finish at once into one folder each point latest at their
// own folder without failing, and leave no temporary link behind (they shared one temporary name:
// one run's link was renamed by the other, which then failed with "no such file").
func TestLinkLatestConcurrent(t *testing.T) {
	root := t.TempDir()
	const n = 32
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = filepath.Join(root, fmt.Sprintf("run%02d", i))
		if err := os.Mkdir(dirs[i], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for round := 0; round < 20; round++ {
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for _, d := range dirs {
			wg.Go(func() { errs <- LinkLatest(root, d) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		target, err := os.Readlink(filepath.Join(root, result.LatestLink))
		if err != nil || !strings.HasPrefix(target, "run") {
			t.Fatalf("round %d: latest -> %q, %v", round, target, err)
		}
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".latest") {
				t.Fatalf("round %d: %s left behind", round, e.Name())
			}
		}
	}
}

// TestLinkLatestLeavesUserFolder: a latest that is the user's own folder is neither replaced nor
// silently kept: the error names it.
func TestLinkLatestLeavesUserFolder(t *testing.T) {
	root := t.TempDir()
	latest := filepath.Join(root, result.LatestLink)
	if err := os.MkdirAll(filepath.Join(latest, "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := LinkLatest(root, filepath.Join(root, "run1"))
	if err == nil || !strings.Contains(err.Error(), "is not a symlink") {
		t.Fatalf("err = %v, want one that says latest is not a symlink", err)
	}
	if _, err := os.Stat(filepath.Join(latest, "mine")); err != nil {
		t.Fatal("the user's folder was touched:", err)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Fatalf("left %d entries, want only latest", len(entries))
	}
}
