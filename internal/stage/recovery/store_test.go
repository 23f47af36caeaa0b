package recovery

import (
	"path/filepath"
	"testing"

	"github.com/inferbench/inferbench/internal/base/pyenv"
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
			lookup := func(k string) (string, bool) { return pyenv.Lookup(tc.vars, k) }
			if got := StoreLabel(tc.loc, lookup, dir); got != tc.want {
				t.Errorf("StoreLabel(%q) = %q, want %q", tc.loc, got, tc.want)
			}
		})
	}
}
