package run

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/kind/exec"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// TestJSONFormatKeepsStdoutJSON: with Format "json", stdout holds the run alone; the verdict
// (budgets), advice and the overhead table go to stderr. It failed before: the budgets text
// followed the JSON on stdout, so `inferbench run --format json | jq` broke whenever budgets or
// advice applied.
func TestJSONFormatKeepsStdoutJSON(t *testing.T) {
	dir := t.TempDir()
	one, none := 3, 0
	bench := &suite.Benchmark{
		Name: "true", Kind: "exec", Config: &exec.Config{Command: "true"}, File: "(test)", Dir: dir,
		Budgets: map[string]string{"latency_ms.p50": "<= 1000000"},
	}
	bench.Load.MeasurementIterations, bench.Load.WarmupIterations = &one, &none
	var stdout, stderr bytes.Buffer
	_, err := Run(context.Background(), Options{
		Selection: Selection{Benchmarks: []*suite.Benchmark{bench}},
		Monitor:   Monitor{Off: true}, NoStore: true, NoHTMLReport: true,
		OutputDir: filepath.Join(dir, "out"), Format: "json", Stdout: &stdout, Stderr: &stderr, Dir: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&stdout)
	var r result.Run
	if err := dec.Decode(&r); err != nil || len(r.Scenarios) != 1 {
		t.Fatalf("stdout is not one run: %v", err)
	}
	if dec.More() {
		t.Errorf("stdout holds more than the run")
	}
	if !strings.Contains(stderr.String(), "budgets: 1 checked, 0 exceeded") {
		t.Errorf("stderr lacks the budgets:\n%s", &stderr)
	}
}
