package drive

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/load"
)

// TestRampSchedule: a ramp's arrivals follow its rate, from start to end, linearly or
// exponentially; the count is the ramp's expected count over the duration.
func TestRampSchedule(t *testing.T) {
	for _, tt := range []struct {
		name              string
		ramp              load.RampConfig
		n                 int     // measured requests over 10 s
		first, last, half float64 // requests in the first second, the last, and before 5 s
	}{
		// Λ(t) = 10t + 4.5t²: 550 in all, 14.5 in the first second, 95.5 in the last.
		{"linear", load.RampConfig{Start: 10, End: 100}, 550, 14.5, 95.5, 162.5},
		// Λ(t) = 100/ln 10 · (10^(t/10) − 1): 391 in all.
		{"exponential", load.RampConfig{Strategy: "exponential", Start: 10, End: 100}, 391, 11.24, 89.3, 93.9},
		// Down, too.
		{"linear down", load.RampConfig{Start: 100, End: 10}, 550, 95.5, 14.5, 387.5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ramp := tt.ramp
			c := load.Config{Mode: load.ModeRate, Arrival: "constant", RateRamp: &ramp, Duration: 10 * time.Second, WarmupIterations: ptr(0)}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			off, warm := sendOffsets(c, ramp.Start)
			if warm != 0 || len(off) != tt.n {
				t.Fatalf("%d requests (%d warm-up), want %d", len(off), warm, tt.n)
			}
			count := func(from, to float64) float64 {
				k := 0
				for _, o := range off {
					if s := o.Seconds(); s >= from && s < to {
						k++
					}
				}
				return float64(k)
			}
			for _, w := range []struct {
				what     string
				got, exp float64
			}{{"first second", count(0, 1), tt.first}, {"last second", count(9, 10), tt.last}, {"first half", count(0, 5), tt.half}} {
				if math.Abs(w.got-w.exp) > 1.5 {
					t.Errorf("%s: %v requests, want %.1f", w.what, w.got, w.exp)
				}
			}
			for i := 1; i < len(off); i++ {
				if off[i] < off[i-1] {
					t.Fatalf("offsets out of order at %d", i)
				}
			}
		})
	}
	// Without a duration, measurement_iterations requests over the ramp's own length.
	c := load.Config{Mode: load.ModeRate, Arrival: "poisson", RateRamp: &load.RampConfig{Start: 10, End: 30}, MeasurementIterations: ptr(200), WarmupIterations: ptr(0)}
	if off, _ := sendOffsets(c, 10); len(off) != 200 || off[199] > 10*time.Second {
		t.Errorf("%d requests, the last at %v: want 200 within the ramp's 10 s", len(off), off[len(off)-1])
	}
	for _, bad := range []load.Config{
		{Mode: load.ModeRate, RateRamp: &load.RampConfig{Start: 0, End: 10}},
		{Mode: load.ModeRate, RateRamp: &load.RampConfig{Strategy: "cubic", Start: 1, End: 10}},
		{Mode: load.ModeConcurrency, Concurrency: 2, RateRamp: &load.RampConfig{Start: 1, End: 10}},
	} {
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "rate_ramp") {
			t.Errorf("%+v: %v, want a rate_ramp error", bad.RateRamp, err)
		}
	}
}
