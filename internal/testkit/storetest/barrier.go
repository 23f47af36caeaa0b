package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/stage/scaleout"
	"github.com/inferbench/inferbench/store"
)

// RunBarrier checks a store's start barrier: count agents, each with its own handle on the
// store as on separate hosts, arrive at different times and all leave with the same start, after
// the last arrival; a second group of the same store is not mixed in.
func RunBarrier(t *testing.T, open func(t *testing.T) store.Params) {
	t.Helper()
	p := open(t)
	const count = 4
	starts := make([]time.Time, count)
	errs := make([]error, count)
	var wg sync.WaitGroup
	began := time.Now()
	for i := range count {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			st, err := store.Open(ctx, p)
			if err != nil {
				errs[i] = err
				return
			}
			defer st.Close()
			b, ok := st.(store.Barrier)
			if !ok {
				errs[i] = errors.New("the store has no barrier")
				return
			}
			time.Sleep(time.Duration(i) * 150 * time.Millisecond) // arrive one by one
			starts[i], errs[i] = scaleout.MeetAt(ctx, b, "g1", i, count, fmt.Sprint("host-", i), scaleout.MeetOptions{Lead: 300 * time.Millisecond, Poll: 20 * time.Millisecond, Timeout: time.Minute})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("agent %d: %v", i, err)
			continue
		}
		if !starts[i].Equal(starts[0]) {
			t.Errorf("agent %d starts at %v, agent 0 at %v", i, starts[i], starts[0])
		}
	}
	if last := began.Add(3 * 150 * time.Millisecond); starts[0].Before(last) {
		t.Errorf("start %v is before the last arrival (~%v)", starts[0], last)
	}
	// A barrier nobody else reaches times out, naming who is missing.
	st, err := store.Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = scaleout.MeetAt(context.Background(), st.(store.Barrier), "g2", 0, 3, "h", scaleout.MeetOptions{Poll: 10 * time.Millisecond, Timeout: 100 * time.Millisecond})
	if err == nil || err.Error() != "start barrier g2: 1 of 3 agents arrived in 100ms; missing 1, 2" {
		t.Errorf("lonely agent: %v", err)
	}
}
