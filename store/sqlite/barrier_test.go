package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/inferbench/inferbench/internal/testkit/storetest"
	"github.com/inferbench/inferbench/store"
)

func TestBarrier(t *testing.T) {
	storetest.RunBarrier(t, func(t *testing.T) store.Params {
		return store.Params{URL: "sqlite:" + filepath.Join(t.TempDir(), "h.db")}
	})
}

// TestNoClock: SQLite runs in the client, so it has no clock of its own to measure against.
func TestNoClock(t *testing.T) {
	st, err := store.Open(context.Background(), store.Params{URL: "sqlite:" + filepath.Join(t.TempDir(), "h.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.(store.Clock).Now(context.Background()); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("clock err = %v", err)
	}
}
