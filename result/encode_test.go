package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/testkit/schematest"
	"github.com/inferbench/inferbench/stats"
)

// manyScenarios returns a run of n scenarios whose strings need escaping (HTML, quotes, control
// characters, non-ASCII, the text the chunked writer cuts at) and whose fields vary.
func manyScenarios(n int) *Run {
	v := 12.5
	r := &Run{Schema: Schema, ID: "20261122_120000-abcd", StartedAt: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC),
		Environment: map[string]any{"hostname": "a<b>&c", "note": "\n  \"scenarios\": []", "cpu": map[string]any{"cores": 64}},
		Config:      Config{Args: []string{"run", "--set", "x=1"}, Set: map[string]string{"scenarios": "[]"}}}
	for i := range n {
		s := Scenario{Benchmark: fmt.Sprint("bench-", i%7), Scenario: fmt.Sprintf("x=%d,s=\"q\"\t\u00e9\u2028", i), Subject: "fake", Status: StatusOK,
			DurationS: float64(i) / 3, Iterations: Iterations{Measured: i}}
		switch i % 4 {
		case 0:
			s.Metrics = map[string]Metric{"latency_ms": SampleMetric("latency_ms", []float64{1, 2.5, 1e-9, 2.5e10, float64(i)}), "requests_per_s": {Unit: "1/s", Value: &v}}
		case 1:
			s.Status, s.Error, s.Warnings = StatusFailed, "<script>", []string{}
			s.Logs, s.Profiles = []string{"logs/b__x.log"}, []string{"profiles/x/cpu.pprof"}
			s.Params = map[string]any{"batch_size": i, "tags": []any{}, "nested": map[string]any{}}
		case 2:
			s.Extra.Window = &Window{Start: r.StartedAt, End: r.StartedAt.Add(time.Second), OK: i}
		case 3: // the figures where encoding/json changes its notation, and strings to escape
			z := math.Copysign(0, -1)
			s.Metrics = map[string]Metric{
				"<a&b>": {Unit: "µs\u2028", Better: "lower", Value: &z, Note: "x\"y\\", Samples: []float64{1e-6, 9.99e-7, 1e21, 9.99e20, -1e-7, 5e-324, math.MaxFloat64, 123456789012345678, -0.5}},
				"a":     {Unit: "ms", Summary: &stats.Summary{N: 2, P999: &v}},
				"":      {},
			}
		}
		r.Scenarios = append(r.Scenarios, s)
	}
	r.Tally()
	return r
}

// TestWriteJSONAgrees checks that the chunked writer writes what encoding/json writes, for chunk
// sizes that do and do not divide the scenarios, and for runs too small to be chunked.
func TestWriteJSONAgrees(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 300, 2*jsonChunk + 5} {
		r := manyScenarios(n)
		var want bytes.Buffer
		if err := writeJSONWhole(&want, r); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := WriteJSON(&got, r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%d scenarios: WriteJSON differs from encoding/json", n)
		}
		for _, chunk := range []int{1, 2, 3, 64} {
			for _, workers := range []int{1, 3} {
				got.Reset()
				if err := writeJSONChunked(&got, r, chunk, workers); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Errorf("%d scenarios, chunks of %d, %d workers: differs from encoding/json at byte %d", n, chunk, workers, firstDiff(got.Bytes(), want.Bytes()))
				}
			}
		}
	}
}

// TestWriteJSONAgreesV1 holds the writer to encoding/json on the runs of testdata/v1, whose
// scenarios carry every typed extra section (resources, serving, sweep, overhead), repeated past
// one chunk.
func TestWriteJSONAgreesV1(t *testing.T) {
	files, _ := filepath.Glob("testdata/v1/*.json")
	if len(files) == 0 {
		t.Fatal("no testdata/v1 files")
	}
	for _, f := range files {
		r, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		base := r.Scenarios
		for len(r.Scenarios) < 2*jsonChunk+3 {
			r.Scenarios = append(r.Scenarios, base...)
		}
		var want, got bytes.Buffer
		if err := writeJSONWhole(&want, r); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(&got, r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: WriteJSON differs from encoding/json at byte %d", f, firstDiff(got.Bytes(), want.Bytes()))
		}
	}
}

// TestWriteJSONNonFinite checks that a value encoding/json refuses (NaN, an infinity) is written
// as null, by the chunked writer as by the whole one (docs/results.md). Failed before: Save of a
// run holding a NaN was an error, and the run was lost.
func TestWriteJSONNonFinite(t *testing.T) {
	r := manyScenarios(3 * jsonChunk)
	nan, inf := math.NaN(), math.Inf(-1)
	sc := &r.Scenarios[2*jsonChunk+1]
	sc.Metrics = map[string]Metric{"x": {Unit: "ms", Value: &nan}, "y": {Unit: "ms", Summary: &stats.Summary{N: 1, Min: inf}}}
	var whole, chunked bytes.Buffer
	if err := writeJSONWhole(&whole, r); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONChunked(&chunked, r, 16, 2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(chunked.Bytes(), whole.Bytes()) {
		t.Errorf("chunked writer differs from the whole one at byte %d", firstDiff(chunked.Bytes(), whole.Bytes()))
	}
	dir := t.TempDir()
	if err := Save(dir, r); err != nil {
		t.Fatalf("Save of a run holding a NaN: %v", err)
	}
	back, err := Load(filepath.Join(dir, RunFile))
	if err != nil {
		t.Fatal(err)
	}
	got := back.Scenarios[2*jsonChunk+1].Metrics
	if got["x"].Value != nil || got["y"].Summary == nil || got["y"].Summary.Min != 0 {
		t.Errorf("read back %+v, want no value for x (null) and y's min 0 (null)", got)
	}
	if !bytes.Contains(whole.Bytes(), []byte(`"value": null`)) || !bytes.Contains(whole.Bytes(), []byte(`"min": null`)) {
		t.Error("the NaN and the infinity are not written as null")
	}
}

// TestWriteJSONError checks that a value encoding/json cannot encode at all is an error, and
// that Save then leaves no run.json (nor a temporary file) behind.
func TestWriteJSONError(t *testing.T) {
	r := manyScenarios(3 * jsonChunk)
	r.Scenarios[2*jsonChunk+1].Params = map[string]any{"x": make(chan int)}
	var b bytes.Buffer
	if err := writeJSONChunked(&b, r, 16, 2); err == nil {
		t.Error("a channel was encoded")
	}
	dir := t.TempDir()
	if err := Save(dir, r); err == nil {
		t.Error("Save of a run holding a channel succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("Save failed but left %v", ents)
	}
	if _, err := os.Stat(filepath.Join(dir, RunFile)); err == nil {
		t.Error("run.json written")
	}
}

// FuzzWriteJSON checks the chunked writer against encoding/json on the runs arbitrary run.json
// documents decode to.
func FuzzWriteJSON(f *testing.F) {
	b, _ := json.Marshal(manyScenarios(9))
	f.Add(b)
	f.Add([]byte(`{"schema":"x","scenarios":[{"benchmark":"\u003c","params":{"a":[1,{}]}},{"status":"ok"}]}`))
	f.Add([]byte(`{"environment":{"x":"\n  \"scenarios\": []"},"scenarios":[{},{},{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r Run
		if json.Unmarshal(data, &r) != nil {
			return
		}
		var want bytes.Buffer
		werr := writeJSONWhole(&want, &r)
		for _, chunk := range []int{1, 2} {
			var got bytes.Buffer
			gerr := writeJSONChunked(&got, &r, chunk, 2)
			if (gerr != nil) != (werr != nil) {
				t.Fatalf("chunked error %v, encoding/json error %v", gerr, werr)
			}
			if werr == nil && !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("chunks of %d differ from encoding/json:\n%s\nwant:\n%s", chunk, got.Bytes(), want.Bytes())
			}
		}
	})
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestNonFiniteMatchesSchema: a run written with a NaN value and an infinite summary figure (null
// in run.json, docs/results.md) still validates against docs/run.schema.json.
func TestNonFiniteMatchesSchema(t *testing.T) {
	files, _ := filepath.Glob("testdata/v1/*.json")
	if len(files) == 0 {
		t.Fatal("no testdata/v1 files")
	}
	r, err := Load(files[0])
	if err != nil {
		t.Fatal(err)
	}
	nan, done := math.NaN(), false
	for i := range r.Scenarios {
		for k, m := range r.Scenarios[i].Metrics {
			switch {
			case m.Value != nil:
				m.Value = &nan
			case m.Summary != nil:
				m.Summary.Min, m.Summary.P99 = math.Inf(-1), math.NaN()
			}
			r.Scenarios[i].Metrics[k] = m
			done = true
		}
	}
	if !done {
		t.Fatalf("%s has no metric to spoil", files[0])
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte("null")) {
		t.Fatal("no null written for the non-finite values")
	}
	schematest.ValidateRun(t, b.Bytes())
}
