// Package heaptest measures the heap a piece of code needs, for the tests that hold a reader's
// memory bounded by what it keeps rather than by its input.
package heaptest

import (
	"runtime"
	"sync"
	"time"
)

// Peak returns the most heap in use while fn ran, above what was in use before, sampled every
// half millisecond.
func Peak(fn func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Microsecond):
			}
		}
	})
	fn()
	close(stop)
	wg.Wait()
	return peak - base
}
