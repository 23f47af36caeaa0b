package gpu

import (
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/monitor"
)

// BenchmarkSampleStub is the cost of one GPU sample through the sampler with a stub backend: the
// sampler's own work (combining devices, integrating power) per sample, without the driver.
func BenchmarkSampleStub(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(map[int]string{1: "1gpu", 8: "8gpu"}[n], func(b *testing.B) {
			st := &stub{}
			for i := 0; i < n; i++ {
				st.devs = append(st.devs, Info{Index: i})
				st.readings = append(st.readings, Reading{UtilPct: 50, MemUsedMB: 1000, PowerW: 300, TempC: 60, SMClockMHz: 1800, MemClockMHz: 2600})
			}
			s, _ := newSampler(st, nil)
			s.Start(time.Now())
			var buf []monitor.Value
			t := time.Now()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t = t.Add(100 * time.Millisecond)
				buf, _ = s.Sample(t, buf[:0])
			}
		})
	}
}
