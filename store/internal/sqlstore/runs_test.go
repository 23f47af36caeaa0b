package sqlstore

import (
	"bytes"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// TestRunDoc: the document encoded a scenario at a time is the one encoded whole from a stripped
// copy, samples left out, and the run's own samples are untouched.
func TestRunDoc(t *testing.T) {
	v := 3.0
	r := &result.Run{Schema: result.Schema, ID: "r", Environment: map[string]any{"hostname": "h"}}
	for i := range 3 {
		m := result.NewMetric("latency_ms")
		m.Samples = []float64{1, 2, float64(i)}
		r.Scenarios = append(r.Scenarios, result.Scenario{Benchmark: "b", Scenario: string(rune('a' + i)),
			Metrics: map[string]result.Metric{"latency_ms": m, "x": {Value: &v}}})
	}
	got, err := runDoc(r)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := stripAll(r)
	if !bytes.Equal(got, want) {
		t.Errorf("runDoc:\n%s\nwant\n%s", got, want)
	}
	if len(r.Scenarios[2].Metrics["latency_ms"].Samples) != 3 {
		t.Error("the run's samples were stripped")
	}
	none := &result.Run{Schema: result.Schema, ID: "e"}
	got, _ = runDoc(none)
	want, _ = stripAll(none)
	if !bytes.Equal(got, want) {
		t.Errorf("no scenario: %s, want %s", got, want)
	}
}
