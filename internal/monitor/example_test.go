package monitor_test

import (
	"fmt"
	"time"

	"github.com/inferbench/inferbench/internal/monitor"
)

// A Recorder keeps exact aggregates and a bounded timeline: 1000 samples fit in 16 points.
func ExampleRecorder() {
	rec := monitor.NewRecorder([]monitor.Metric{{Name: "rss_mb", Unit: "MB", Kind: monitor.Gauge}}, 16)
	t0 := time.Unix(0, 0)
	rec.Begin(t0)
	for i := 0; i < 1000; i++ {
		rec.Add(t0.Add(time.Duration(i)*100*time.Millisecond), []monitor.Value{{Name: "rss_mb", V: 100 + float64(i%10)}})
	}
	rep := rec.Report()
	a, _ := rep.Get("rss_mb")
	tl, _ := rep.Timeline("rss_mb")
	fmt.Printf("n=%d mean=%.1f peak=%.0f; timeline: %d points of %d samples\n", a.N, a.Mean, a.Max, len(tl.V), tl.Every)
	// Output: n=1000 mean=104.5 peak=109; timeline: 16 points of 64 samples
}
