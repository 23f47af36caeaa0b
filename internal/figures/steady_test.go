package figures

import (
	"testing"
	"time"
)

// TestSteadyClosedLoop: 4 streams of 10 requests of 10 ms each, the streams starting 5 ms apart
// (a ramp-up) and the last one stopping after 4 requests (a drain): the window is where all 4
// were in flight, and the requests outside it are the ramp-up's and the drain's.
func TestSteadyClosedLoop(t *testing.T) {
	f := New(0, nil, true, -1)
	t0 := time.Unix(100, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	for s := range 4 {
		k := 10
		if s == 3 {
			k = 4
		}
		for i := range k {
			start := 5*s + 10*i
			f.addSpan(ms(start), ms(start+10))
		}
	}
	st, ok := f.Steady(4)
	if !ok {
		t.Fatal("no window")
	}
	if st.Level != 4 || !st.Start.Equal(ms(15)) || !st.End.Equal(ms(55)) {
		t.Errorf("window %v to %v at %d, want 15 ms to 55 ms at 4", st.Start.Sub(t0), st.End.Sub(t0), st.Level)
	}
	if st.Total != 34 || st.Inside != 17 {
		t.Errorf("%d of %d inside (outside %.2f)", st.Inside, st.Total, st.Outside())
	}
	// A target never reached: the level is the time-weighted median.
	if st, _ := f.Steady(64); st.Level != 3 && st.Level != 4 {
		t.Errorf("target 64: level %d, want the median 3 or 4", st.Level)
	}
}
