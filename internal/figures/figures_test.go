package figures

import (
	"testing"
	"time"

	"github.com/inferbench/inferbench/subject"
)

// TestStreamMetrics checks the one definition the engine and the SLO checks share: events read
// together are one delivery whose gap is spread over them, and a send on schedule has no
// separate scheduled latencies.
func TestStreamMetrics(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	o := subject.Observation{Scheduled: t0, Start: t0, FirstToken: at(5), End: at(25),
		Tokens: []subject.TokenEvent{{At: at(5), Tokens: 1}, {At: at(25), Tokens: 1}, {At: at(25), Tokens: 1}}}
	got := map[string][]float64{}
	out, ok := StreamMetrics(o, func(m string, v float64) { got[m] = append(got[m], v) })
	if !ok || out != 3 {
		t.Fatalf("out %d, ok %v", out, ok)
	}
	// As they arrived: the second and third events came in one read 20 ms after the first. The
	// gap was spread over them ([10 10]), a figure neither side saw.
	if itl := got["itl_ms"]; len(itl) != 2 || itl[0] != 20 || itl[1] != 0 {
		t.Errorf("itl_ms %v, want [20 0]: two events read together 20 ms after the first", itl)
	}
	if _, sched := got["ttft_sched_ms"]; sched {
		t.Errorf("ttft_sched_ms for a request sent on schedule: %v", got)
	}
	if tpot := got["tpot_ms"]; len(tpot) != 1 || tpot[0] != 10 {
		t.Errorf("tpot_ms %v, want [10]", tpot)
	}
}

// TestParseSLOs: a statistic with a dot of its own (p99.9) stays whole, a bare metric means p99,
// and the objectives come ordered by key.
func TestParseSLOs(t *testing.T) {
	slos, err := ParseSLOs(map[string]float64{"itl_ms.p99.9": 5, "e2e_ms": 100})
	if err != nil || len(slos) != 2 || slos[0].Stat != "p99" || slos[1].Stat != "p99.9" {
		t.Errorf("ParseSLOs = %+v, %v", slos, err)
	}
}
