package monitor

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/result"
)

func TestRecorderAggregatesAndBound(t *testing.T) {
	r := NewRecorder([]Metric{{Name: "g", Unit: "MB", Better: Lower, Kind: Gauge}, {Name: "tot", Unit: "J", Kind: Total}}, 64)
	t0 := time.Unix(100, 0)
	r.Begin(t0)
	const n = 10000
	var sum float64
	for i := 0; i < n; i++ {
		v := float64(i % 100)
		if i == 5001 {
			v = 1e6 // one spike: the timeline must keep it in Max
		}
		sum += v
		r.Add(t0.Add(time.Duration(i)*100*time.Millisecond), []Value{{"g", v}, {"nan", math.NaN()}})
	}
	r.Add(t0.Add(n*100*time.Millisecond), []Value{{"tot", 42}})
	r.End(t0.Add(n * 100 * time.Millisecond))
	rep := r.Report()

	g, ok := rep.Get("g")
	if !ok {
		t.Fatal("no aggregate g")
	}
	want := result.Aggregate{Name: "g", Unit: "MB", Better: Lower, Kind: "gauge", N: n, Mean: sum / n, Min: 0, Max: 1e6, Last: 99}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("aggregate (-want +got):\n%s", diff)
	}
	if tot, _ := rep.Get("tot"); tot.Value != 42 || tot.Kind != "total" {
		t.Errorf("total = %+v, want value 42", tot)
	}
	if _, ok := rep.Get("nan"); ok {
		t.Error("a metric with only NaN readings was reported")
	}
	tl, ok := rep.Timeline("g")
	if !ok {
		t.Fatal("no timeline g")
	}
	if len(tl.V) > 64 || len(tl.V) < 32 {
		t.Errorf("timeline has %d points, want 32..64", len(tl.V))
	}
	var tsum, peak float64
	for i := range tl.V {
		tsum += tl.V[i] * float64(tl.Every) // all buckets but the last are full
		peak = math.Max(peak, tl.Max[i])
		if i > 0 && tl.T[i] <= tl.T[i-1] {
			t.Fatalf("timeline times not increasing at %d", i)
		}
	}
	if peak != 1e6 {
		t.Errorf("timeline lost the spike: max %v", peak)
	}
	if tl.Every != 256 {
		t.Errorf("every = %d, want 256 (10000 samples into at most 64 points)", tl.Every)
	}
	if rep.Samples != n+1 {
		t.Errorf("samples = %d, want %d", rep.Samples, n+1)
	}
}

// fakeSampler counts and reports the call order.
type fakeSampler struct {
	name   string
	calls  []string
	n      float64
	failAt int
}

func (f *fakeSampler) Name() string { return f.name }
func (f *fakeSampler) Metrics() []Metric {
	return []Metric{{Name: f.name + "_g", Unit: "x", Kind: Gauge}, {Name: f.name + "_total", Unit: "J", Kind: Total}}
}
func (f *fakeSampler) Start(time.Time) error { f.calls = append(f.calls, "start"); return nil }
func (f *fakeSampler) Sample(now time.Time, out []Value) ([]Value, error) {
	f.n++
	f.calls = append(f.calls, "sample")
	if int(f.n) == f.failAt {
		return out, errors.New("boom")
	}
	return append(out, Value{f.name + "_g", f.n}), nil
}
func (f *fakeSampler) Stop(now time.Time, out []Value) ([]Value, error) {
	f.calls = append(f.calls, "stop")
	return append(out, Value{f.name + "_total", 10 * f.n}), nil
}

func TestMonitorLifecycle(t *testing.T) {
	f := &fakeSampler{name: "fake", failAt: 2}
	m := New([]Sampler{f, nil}, WithInterval(5*time.Millisecond), WithUnavailable(errors.New("gpu: not available: no driver")))
	m.Start()
	time.Sleep(30 * time.Millisecond)
	r := m.Stop()
	if f.calls[0] != "start" || f.calls[1] != "sample" || f.calls[len(f.calls)-1] != "stop" {
		t.Errorf("calls = %v, want start, sample..., stop", f.calls)
	}
	g, _ := r.Get("fake_g")
	if g.N < 3 || g.N != int(f.n)-1 {
		t.Errorf("gauge n = %d with %v samples (one failed)", g.N, f.n)
	}
	if tot, _ := r.Get("fake_total"); tot.Value != 10*f.n {
		t.Errorf("total = %v, want %v", tot.Value, 10*f.n)
	}
	if len(r.Warnings) != 1 || len(r.Unavailable) != 1 {
		t.Errorf("warnings %q, unavailable %q: want one each", r.Warnings, r.Unavailable)
	}
	if r.IntervalMS != 5 || r.DurationS <= 0 {
		t.Errorf("interval_ms = %v", r.IntervalMS)
	}
	if r.CostS <= 0 || r.CostPct <= 0 {
		t.Errorf("cost = %v s, %v%%: want the sampling time", r.CostS, r.CostPct)
	}
	if again := m.Stop(); again.Samples != r.Samples {
		t.Error("second Stop gave another report")
	}
}

func TestMonitorStopWithoutStart(t *testing.T) {
	r := New(nil).Stop()
	if r == nil || len(r.Metrics) != 0 {
		t.Errorf("report = %+v, want empty", r)
	}
}
