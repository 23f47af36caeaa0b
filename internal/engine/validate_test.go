package engine

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// TestInvalidValuesNotAveraged feeds the collector observations whose own figures cannot be
// measurements (a worker's negative or NaN latency, a server's negative or absurd usage, a
// command's negative item count) beside good ones: each is a failed iteration of kind
// "invalid_value", and the summaries hold only the good values.
func TestInvalidValuesNotAveraged(t *testing.T) {
	t0 := time.Unix(1000, 0)
	good := subject.Observation{Start: t0, End: t0.Add(10 * time.Millisecond), Values: map[string]float64{"latency_ms": 10}}
	bad := []subject.Observation{
		{Start: t0, End: t0.Add(time.Millisecond), Values: map[string]float64{"latency_ms": -5}},
		{Start: t0, End: t0.Add(time.Millisecond), Values: map[string]float64{"latency_ms": math.NaN()}},
		{Start: t0, End: t0.Add(time.Millisecond), Values: map[string]float64{"memory_mb": math.Inf(1)}},
		{Start: t0, End: t0.Add(time.Millisecond), Items: -3},
		{Start: t0, End: t0.Add(time.Millisecond), FirstToken: t0, OutputTokens: -7, Tokens: []subject.TokenEvent{{At: t0, Tokens: 1}}},
		{Start: t0, End: t0.Add(time.Millisecond), FirstToken: t0, OutputTokens: 1e12, Tokens: []subject.TokenEvent{{At: t0, Tokens: 1}}},
		{Start: t0.Add(time.Second), End: t0},
	}
	c := newCollector(0, load.Config{})
	c.Observe(load.Measure, good, nil)
	for _, o := range bad {
		c.Observe(load.Measure, o, nil)
	}
	c.Observe(load.Measure, good, nil)
	var r result.Scenario
	c.fill(&r, 0)
	if r.Iterations.Failed != len(bad) || c.errKinds["invalid_value"] != len(bad) {
		t.Fatalf("failed %d (invalid_value %d), want %d", r.Iterations.Failed, c.errKinds["invalid_value"], len(bad))
	}
	lat := r.Metrics["latency_ms"].Summary
	if lat == nil || lat.N != 2 || lat.Min != 10 || lat.Max != 10 {
		t.Fatalf("latency_ms summary %+v, want the two good values only", lat)
	}
	if _, ok := r.Metrics["output_tokens"]; ok {
		t.Errorf("output_tokens summarised from invalid usage: %+v", r.Metrics["output_tokens"])
	}
	if _, ok := r.Metrics["memory_mb"]; ok {
		t.Errorf("memory_mb kept an infinite peak: %+v", r.Metrics["memory_mb"])
	}
	if msg := r.Errors[0].Error; !strings.Contains(msg, "latency_ms = -5: a value in ms cannot be negative") {
		t.Errorf("first error %q does not say what was wrong", msg)
	}
}
