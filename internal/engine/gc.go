package engine

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The garbage collector's headroom while a scenario drives a subject that runs outside this
// process (a server, a worker, a command). The client's live heap is small (a few MB at 512
// streams) while a serving load allocates for every event it reads, so at Go's default target
// (GOGC=100: as much headroom as live heap) it collects many times a second, and each collection
// scans the stacks of the two goroutines every connection has: at 512 streams on one core that
// cost a quarter of the requests the client could send (docs/performance.md, "The client's
// garbage collector"). The engine keeps the headroom at ClientGCHeadroom instead, as GOGC =
// 100 × ClientGCHeadroom / live heap, between 100 and ClientGCPercentMax: a fixed amount of
// memory, where a fixed GOGC would multiply a large heap (a million requests' distributions) too.
const (
	ClientGCHeadroom   = 32 << 20
	ClientGCPercentMax = 800
	clientGCEvery      = 100 * time.Millisecond // how often the live heap is read
)

// clientGCPercent is the target that gives a live heap of live bytes ClientGCHeadroom of
// headroom, within [100, ClientGCPercentMax].
func clientGCPercent(live uint64) int {
	if live == 0 {
		return ClientGCPercentMax
	}
	return int(min(max(100*uint64(ClientGCHeadroom)/live, 100), ClientGCPercentMax))
}

// clientGC keeps the collector's headroom at ClientGCHeadroom for the drive of a subject outside
// this process and returns what stops it and restores the target. A Go function's benchmark
// (subject.Kind.InProcess) shares this collector with the code it measures, so its target stays
// the one `go test -bench` would use; a GOGC the user set is theirs to keep.
func clientGC(inProcess bool) (restore func()) {
	if inProcess || os.Getenv("GOGC") != "" {
		return func() {}
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	live := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	set := clientGCPercent(live())
	old := debug.SetGCPercent(set)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(clientGCEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				// Only a change of a tenth or more: each one recomputes the collector's pacing.
				if p := clientGCPercent(live()); 10*abs(p-set) >= set {
					set = p
					debug.SetGCPercent(p)
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-done
		debug.SetGCPercent(old)
	}
}

func abs(x int) int { return max(x, -x) }
