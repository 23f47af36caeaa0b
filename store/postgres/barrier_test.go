package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/stage/scaleout"
	"github.com/inferbench/inferbench/internal/testkit/storetest"
	"github.com/inferbench/inferbench/store"
)

func TestBarrier(t *testing.T) {
	pg := storetest.StartPostgres(t)
	storetest.RunBarrier(t, func(t *testing.T) store.Params { return store.Params{URL: pg.NewDatabase(t)} })
}

// TestClockOffset: the server runs on this machine, so the measured offset is within the
// measurement's own uncertainty of zero (plus a millisecond for the two clocks' readings).
func TestClockOffset(t *testing.T) {
	pg := storetest.StartPostgres(t)
	st, err := store.Open(context.Background(), store.Params{URL: pg.NewDatabase(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	off, unc, err := scaleout.Offset(context.Background(), st.(store.Clock))
	if err != nil {
		t.Fatal(err)
	}
	if off.Abs() > unc+time.Millisecond {
		t.Errorf("offset %v ± %v from a server on this machine", off, unc)
	}
}
