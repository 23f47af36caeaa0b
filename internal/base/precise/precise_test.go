package precise

import (
	"context"
	"errors"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// TestSleepNeverEarly: a wait lasts at least what it was asked, and a cancelled context ends it
// at once with the context's error.
func TestSleepNeverEarly(t *testing.T) {
	for _, d := range []time.Duration{0, 200 * time.Microsecond, 1700 * time.Microsecond, 4 * time.Millisecond} {
		start := time.Now()
		if err := Sleep(context.Background(), d); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got < d {
			t.Errorf("Sleep(%v) returned after %v", d, got)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Errorf("Sleep on a cancelled context: %v after %v", err, time.Since(start))
	}
}

// TestUntilReusesTimer: one timer serves waits in sequence, each ending at its due time or later.
func TestUntilReusesTimer(t *testing.T) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for i := 0; i < 5; i++ {
		due := time.Now().Add(3 * time.Millisecond)
		if !Until(context.Background(), timer, due) {
			t.Fatal("Until returned false with a live context")
		}
		if now := time.Now(); now.Before(due) {
			t.Errorf("wait %d ended %v early", i, due.Sub(now))
		}
	}
}

// TestFineWaitsOutsideSystemCalls: goroutines in Fine wait parked, not in a system call each. A
// goroutine blocked in a system call holds a thread, and the runtime's monitor, finding one to
// take its processor from, polls every 20 µs: at a wait every half millisecond (an open loop's
// sends, the mockserver's iterations) that was an eighth of a streamed request's CPU.
func TestFineWaitsOutsideSystemCalls(t *testing.T) {
	const waiters = 16
	sample := []metrics.Sample{{Name: "/sched/goroutines/not-in-go:goroutines"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() == metrics.KindBad {
		t.Skip("the runtime has no /sched/goroutines/not-in-go metric")
	}
	var started, done sync.WaitGroup
	started.Add(waiters)
	for range waiters {
		done.Go(func() {
			started.Done()
			Fine(200 * time.Millisecond)
		})
	}
	started.Wait()
	most := uint64(0)
	for range 20 {
		runtime.Gosched()
		metrics.Read(sample)
		most = max(most, sample[0].Value.Uint64())
	}
	done.Wait()
	if most >= waiters/2 {
		t.Errorf("%d goroutines in system calls while %d waited in Fine: they sleep in the kernel", most, waiters)
	}
}
