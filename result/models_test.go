package result

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/inferbench/inferbench/internal/testkit/schematest"
	"github.com/inferbench/inferbench/stats"
)

// TestSaveWritesModelFiles checks seed 004's layout: Save writes a run.json per model, without
// samples and valid against the run schema, and benchmark_summary.json with each model's
// scenarios and headline metrics.
func TestSaveWritesModelFiles(t *testing.T) {
	lat := Metric{Unit: "ms", Better: "lower", Summary: &stats.Summary{N: 2, Mean: 1.5, Median: 1.5, Min: 1, Max: 2}, Samples: []float64{1, 2}}
	own := Metric{Unit: "", Better: "", Value: new(float64)}
	r := &Run{Schema: Schema, ID: "20261125_120000-abc", Environment: map[string]any{}, Scenarios: []Scenario{
		{Benchmark: "b", Scenario: "variant=eager", Model: "gpt2", Subject: "python", Status: StatusOK, Metrics: map[string]Metric{"latency_ms": lat, "rss_growth_mb": lat}},
		{Benchmark: "b", Scenario: "default", Model: "meta-llama/Llama-2-7b", Subject: "python", Status: StatusSkipped, SkipReason: "no GPU"},
		{Benchmark: "b", Scenario: "variant=compiled", Model: "gpt2", Subject: "python", Status: StatusFailed, Error: "boom", Metrics: map[string]Metric{"my_score": own}},
		{Benchmark: "c", Scenario: "default", Subject: "mock", Status: StatusOK},
	}}
	r.Tally()
	dir := t.TempDir()
	if err := Save(dir, r); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "models", "gpt2.json"))
	if err != nil {
		t.Fatal(err)
	}
	schematest.ValidateRun(t, data)
	gpt2, err := Load(filepath.Join(dir, "models", "gpt2.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(gpt2.Scenarios) != 2 || gpt2.Summary.Succeeded != 1 || gpt2.Summary.Failed != 1 {
		t.Errorf("models/gpt2.json: %d scenarios, summary %+v", len(gpt2.Scenarios), gpt2.Summary)
	}
	if m := gpt2.Scenarios[0].Metrics["latency_ms"]; m.Samples != nil || m.Summary == nil || m.Summary.Median != 1.5 {
		t.Errorf("models/gpt2.json latency_ms: %+v, want the summary without samples", m)
	}
	if r.Scenarios[0].Metrics["latency_ms"].Samples == nil {
		t.Error("writing the model files dropped the run's own samples")
	}
	llama := modelFile("meta-llama/Llama-2-7b")
	if _, err := os.Stat(filepath.Join(dir, llama)); err != nil || filepath.Dir(llama) != "models" {
		t.Errorf("%s: %v", llama, err)
	}
	if llama != "models/meta-llama__Llama-2-7b~8291f529.json" { // as docs/results.md writes it
		t.Errorf("ModelFile: %s", llama)
	}
	if modelFile("m/A") == modelFile("m/a") || modelFile("a/b") == modelFile("a__b") {
		t.Error("two models share a file")
	}

	var bs benchmarkSummary
	data, err = os.ReadFile(filepath.Join(dir, benchmarkSummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &bs); err != nil {
		t.Fatal(err)
	}
	if bs.Schema != benchmarkSummarySchema || bs.RunID != r.ID || bs.Summary.Total != 4 || len(bs.Models) != 3 {
		t.Fatalf("benchmark_summary.json: %s", data)
	}
	g := bs.Models[0]
	if g.Model != "gpt2" || g.File != "models/gpt2.json" || len(g.Scenarios) != 2 || g.Scenarios[1].Error != "boom" {
		t.Errorf("gpt2: %+v", g)
	}
	// Headline metrics only (latency_ms, a benchmark's own my_score), without samples.
	if m, ok := g.Scenarios[0].Metrics["latency_ms"]; !ok || m.Samples != nil {
		t.Errorf("gpt2 eager metrics: %+v", g.Scenarios[0].Metrics)
	}
	if _, ok := g.Scenarios[0].Metrics["rss_growth_mb"]; ok {
		t.Error("a secondary metric in benchmark_summary.json")
	}
	if _, ok := g.Scenarios[1].Metrics["my_score"]; !ok {
		t.Error("a benchmark's own metric is missing from benchmark_summary.json")
	}
	if bs.Models[1].Scenarios[0].SkipReason != "no GPU" || bs.Models[2].Model != "" || bs.Models[2].File != "" {
		t.Errorf("models: %+v", bs.Models[1:])
	}
}
