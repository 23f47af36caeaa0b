package run_test

import (
	"path/filepath"
	"testing"

	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/store"
)

func TestStoreLabel(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, loc string
		vars      []string
		want      string
	}{
		// nothing set: the default SQLite file under the working directory
		{"default", "", nil, filepath.Join(dir, store.DefaultPath)},
		// the environment's store when the flag is empty
		{"env", "", []string{store.EnvVar + "=sqlite:other.db"}, "sqlite:other.db"},
		// the flag wins over the environment
		{"flag", "sqlite:flag.db", []string{store.EnvVar + "=sqlite:other.db"}, "sqlite:flag.db"},
		// a password never shows
		{"redacted", "postgres://bench:secret@db/bench", nil, "postgres://bench:xxxxx@db/bench"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := run.StoreLabel(tc.loc, run.Env{Dir: dir, Vars: tc.vars}); got != tc.want {
				t.Errorf("StoreLabel(%q) = %q, want %q", tc.loc, got, tc.want)
			}
		})
	}
}
