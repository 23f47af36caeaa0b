package drive

import (
	"context"
	"testing"
	"time"

	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
)

// TestSlices: the measured phase is cut into slices of Slice, each with the requests sent in it
// and their percentiles; every measured request is in one slice.
func TestSlices(t *testing.T) {
	s := &streamer{tokens: 3, gap: time.Millisecond}
	rec := newRecorder()
	c := load.Config{Mode: load.ModeRate, Rate: 200, Arrival: "constant", Duration: 300 * time.Millisecond, WarmupIterations: ptr(0), Slice: 100 * time.Millisecond}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := driveOpenLoop(context.Background(), s, c, rec); err != nil {
		t.Fatal(err)
	}
	sl, ok := rec.extra[result.SectionSlices].([]result.SliceStat)
	if !ok || len(sl) < 3 || len(sl) > 6 {
		t.Fatalf("slices %#v, want 3 (a few more with late sends on a busy machine)", rec.extra[result.SectionSlices])
	}
	n := 0
	for k, st := range sl {
		n += st.Requests
		if st.StartS != float64(k)*0.1 || st.Requests > 0 && (st.Quantiles["ttft_ms.p50"] < 1 || st.Quantiles["tpot_ms.p99"] < 0.9) {
			t.Errorf("slice %d: %+v", k, st)
		}
	}
	if n != len(rec.obs[load.Measure]) {
		t.Errorf("%d requests in slices, %d measured", n, len(rec.obs[load.Measure]))
	}
	if first := sl[0]; first.Requests < 5 || first.RPS != float64(first.Requests-first.Failed)/0.1 {
		t.Errorf("first slice %+v: want about 20 requests, at 10 per 100 ms of requests/s", first)
	}
}
