package engine

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// synthetic is a streaming subject whose timestamps are made up from the request's index: its
// samples are the same in every run, whatever the machine.
type synthetic struct{ t0 time.Time }

func (s synthetic) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	start := s.t0.Add(time.Duration(r.Index) * time.Millisecond)
	// Distinct TTFTs of five significant digits, in no order.
	first := start.Add(time.Duration((r.Index*7919)%17011+1) * 1371 * time.Nanosecond)
	return subject.Observation{Start: start, FirstToken: first, End: first.Add(time.Millisecond),
		Tokens: []subject.TokenEvent{{At: first, Tokens: 1}}, OutputTokens: 1, Streamed: true}, nil
}

func (synthetic) Close() error { return nil }

// collectSynthetic runs a closed loop of n synthetic requests into a collector, with one SLO on
// ttft_ms.p99, and returns the scenario's result.
func collectSynthetic(t *testing.T, n int, limit float64) result.Scenario {
	t.Helper()
	zero := 0
	cfg := load.Config{Mode: load.ModeConcurrency, Concurrency: 4, WarmupIterations: &zero, MeasurementIterations: &n,
		SLO: map[string]float64{"ttft_ms.p99": limit}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	col := newCollector(0, cfg)
	drive, _ := load.Lookup(cfg)
	if err := drive(context.Background(), synthetic{time.Unix(1000, 0)}, cfg, col); err != nil {
		t.Fatal(err)
	}
	var r result.Scenario
	col.fill(&r, 1)
	if r.Extra.SLO == nil || r.Metrics["ttft_ms"].Summary == nil {
		t.Fatalf("no SLO verdict or no ttft_ms: %+v", r.Extra)
	}
	return r
}

// TestSLOJudgesRunJSONSamples: an SLO verdict is judged on the distribution run.json reports. A
// limit placed exactly at the reported p99 holds, the next float below it does not, and the
// value the verdict names is that p99. There are more requests than a sweep step holds raw
// (17,011 > 2^14): a verdict judged on other samples (a histogram of its own) misses p99 here.
func TestSLOJudgesRunJSONSamples(t *testing.T) {
	const n = 17011
	p99 := collectSynthetic(t, n, 1e9).Metrics["ttft_ms"].Summary.P99

	at := collectSynthetic(t, n, p99)
	if got := at.Metrics["ttft_ms"].Summary.P99; got != p99 {
		t.Fatalf("p99 %v in the second run, %v in the first: the samples are not the same", got, p99)
	}
	if !at.Extra.SLO.Hold {
		t.Errorf("ttft_ms.p99 <= %v does not hold although run.json's p99 is %v: %v", p99, p99, at.Extra.SLO.Failures)
	}

	below := collectSynthetic(t, n, math.Nextafter(p99, 0))
	want := "ttft_ms.p99 = " + strconv.FormatFloat(p99, 'g', 4, 64) + " >"
	if below.Extra.SLO.Hold || len(below.Extra.SLO.Failures) != 1 || !strings.HasPrefix(below.Extra.SLO.Failures[0], want) {
		t.Errorf("limit just below run.json's p99 %v: hold %v, failures %q, want one starting %q",
			p99, below.Extra.SLO.Hold, below.Extra.SLO.Failures, want)
	}
	// Goodput counts the requests at or under the limit over the same window as requests_per_s:
	// all of them but those above p99.
	rps, good := *at.Metrics["requests_per_s"].Value, *at.Metrics["goodput_rps"].Value
	if good > rps || good < 0.98*rps {
		t.Errorf("goodput %v req/s with the limit at p99, requests %v req/s: want 98-100%% of it", good, rps)
	}
}
