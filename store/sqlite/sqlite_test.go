package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/inferbench/inferbench/internal/testkit/storetest"
	"github.com/inferbench/inferbench/store"
	_ "github.com/inferbench/inferbench/store/sqlite"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Params {
		return store.Params{URL: "sqlite:" + filepath.Join(t.TempDir(), "history.db")}
	})
}

func TestDefaultPath(t *testing.T) {
	dir := t.TempDir()
	if got, want := store.SQLitePath("", dir), filepath.Join(dir, ".inferbench", "history.db"); got != want {
		t.Errorf("SQLitePath(\"\", dir) = %q, want %q", got, want)
	}
}
