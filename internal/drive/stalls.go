package drive

import (
	"math"
	"time"

	"github.com/inferbench/inferbench/internal/base/unit"
	"github.com/inferbench/inferbench/stats"
)

// stallTick is the sleep of the stall watch: how late it wakes is how long the client's goroutines
// wait for a CPU (the event loop's stalls).
const stallTick = 5 * time.Millisecond

// stallWatch measures the client's event-loop stalls while a measured phase runs.
type stallWatch struct {
	quit chan struct{}
	done chan float64
}

func watchStalls() *stallWatch {
	w := &stallWatch{quit: make(chan struct{}), done: make(chan float64, 1)}
	go func() {
		d := stats.NewDist(sampleLimit)
		t := time.NewTimer(stallTick)
		defer t.Stop()
		for {
			due := time.Now().Add(stallTick)
			select {
			case <-w.quit:
				p99 := math.NaN()
				if x, err := d.Summary(); err == nil {
					p99 = x.P99
				}
				w.done <- p99
				return
			case <-t.C: // the channel's time leaves out the wait for a CPU: time.Since does not
				d.Add(max(unit.MS(time.Since(due)), 0))
				t.Reset(stallTick)
			}
		}
	}()
	return w
}

// stop ends the watch and returns the p99 of its wake-up delays in ms (NaN without any).
func (w *stallWatch) stop() float64 {
	close(w.quit)
	return <-w.done
}
