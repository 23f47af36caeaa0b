package load_test

import (
	"testing"

	"github.com/inferbench/inferbench/load"
)

// By default every slot of a closed loop warms up: 3 calls, or the concurrency when larger, so
// that the measured calls do not begin with the other slots' first connections and calls at
// once (at 512 streams that read half of the first 512 first tokens together with the next).
// A warm-up the definition sets is kept, 0 included. Before, the default was 3 at any
// concurrency.
func TestWarmupCoversEverySlot(t *testing.T) {
	zero, five := 0, 5
	for _, c := range []struct {
		cfg  load.Config
		want int
	}{
		{load.Config{}, 3},
		{load.Config{Concurrency: 2}, 3},
		{load.Config{Concurrency: 512}, 512},
		{load.Config{Concurrency: 512, WarmupIterations: &zero}, 0},
		{load.Config{Concurrency: 512, WarmupIterations: &five}, 5},
	} {
		if got := c.cfg.Warmup(); got != c.want {
			t.Errorf("concurrency %d, warmup_iterations %v: Warmup() = %d, want %d", c.cfg.Concurrency, c.cfg.WarmupIterations, got, c.want)
		}
	}
}
