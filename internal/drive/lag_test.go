package drive

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/inferbench/inferbench/load"
)

// BenchmarkOpenLoopLag runs an open loop of b.N requests at 2,000/s (poisson) against a subject
// that answers in 1 ms, and reports the schedule lag and the achieved rate.
func BenchmarkOpenLoopLag(b *testing.B) {
	s := &streamer{ttft: func(int) time.Duration { return time.Millisecond }}
	rec := newRecorder()
	c := load.Config{Rate: 2000, Seed: 1, WarmupIterations: ptr(0), MeasurementIterations: ptr(b.N)}
	b.ResetTimer()
	if err := driveOpenLoop(context.Background(), s, c, rec); err != nil {
		b.Fatal(err)
	}
	var lags []float64
	first, last := time.Time{}, time.Time{}
	for _, o := range rec.obs[load.Measure] {
		lags = append(lags, o.Values["schedule_lag_ms"])
		if first.IsZero() || o.Start.Before(first) {
			first = o.Start
		}
		if o.Start.After(last) {
			last = o.Start
		}
	}
	b.ReportMetric(quantile(lags, 0.5), "lag-p50-ms")
	b.ReportMetric(quantile(lags, 0.99), "lag-p99-ms")
	b.ReportMetric(float64(len(lags)-1)/last.Sub(first).Seconds(), "sent/s")
	b.ReportMetric(0, "ns/op")
}

func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}
