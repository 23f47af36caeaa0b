package result

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// checkImported is what every importer promises of a run it returns.
func checkImported(t *testing.T, r *Run) {
	t.Helper()
	if len(r.Scenarios) == 0 {
		t.Fatal("a run without scenarios was accepted")
	}
	if err := r.CheckValues(); err != nil {
		t.Fatalf("accepted a value CheckValues refuses: %v", err)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatalf("accepted run does not encode: %v", err)
	}
}

// FuzzReadGoBench feeds arbitrary text to the `go test -bench` importer.
func FuzzReadGoBench(f *testing.F) {
	for _, s := range []string{
		"goos: linux\ngoarch: amd64\npkg: x\nBenchmarkA-8 100 12 ns/op 3 B/op 1 allocs/op\nBenchmarkA-8 100 13 ns/op 3 B/op 1 allocs/op\n",
		"BenchmarkTokenize/len=64-8 1000 1.5 ns/op 10 MB/s\n", "BenchmarkA 1 NaN ns/op\n", "BenchmarkA 1 -1 ns/op\n",
		"commit: abc\nBenchmarkB/x=1/y=2-4 5 7e9 ns/op 2 widgets/op\n", "Benchmark 1 1 ns/op\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := readGoBench(bytes.NewReader(data), "fuzz.txt", "r1", time.Unix(0, 0))
		if err == nil {
			checkImported(t, r)
		}
	})
}

// FuzzReadPytestBenchmark feeds arbitrary bytes to the pytest-benchmark importer.
func FuzzReadPytestBenchmark(f *testing.F) {
	for _, s := range []string{
		`{"machine_info":{"node":"h"},"commit_info":{"id":"abc","branch":"main"},"datetime":"2024-01-01T00:00:00.000001","benchmarks":[{"group":"g","name":"test_a[1]","fullname":"t.py::test_a[1]","params":{"n":1},"stats":{"min":0.001,"max":0.003,"mean":0.002,"stddev":0.001,"median":0.002,"q1":0.001,"q3":0.003,"rounds":3,"ops":500,"data":[0.001,0.002,0.003]}}]}`,
		`{"benchmarks":[{"name":"test_b","stats":{"rounds":5,"mean":0.1,"min":0.05,"max":0.2,"median":0.1}}]}`,
		`{"benchmarks":[{"name":"test_c","stats":{"rounds":-1,"mean":-0.1}}]}`, `{"benchmarks":[]}`, `[]`,
		// The stream's forms (readPytest): the datetime after the benchmarks, nested unknown
		// keys skipped, two benchmarks keys, keys in another case, a document cut short.
		`{"benchmarks":[{"name":"d","stats":{"rounds":2,"data":[0.1,0.2]}}],"version":{"a":[1,{"b":[]}]},"datetime":"2026-11-30T10:00:00"}`,
		`{"Benchmarks":[{"name":"e","stats":{"rounds":1,"mean":1}}],"benchmarks":null}`,
		`{"benchmarks":[{"name":"f","stats":{"rounds":2,"data":[0.1,0.2]}},`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := readPytestBenchmark(bytes.NewReader(data), "fuzz.json", "r1")
		if err == nil {
			checkImported(t, r)
		} else if !strings.HasPrefix(err.Error(), "fuzz.json: ") {
			t.Errorf("error %q does not name the file", err)
		}
	})
}

// FuzzReadHyperfine feeds arbitrary bytes to the hyperfine importer.
func FuzzReadHyperfine(f *testing.F) {
	for _, s := range []string{
		`{"results":[{"command":"sleep 0.1","mean":0.1,"stddev":0.001,"median":0.1,"min":0.099,"max":0.102,"times":[0.099,0.1,0.102],"parameters":{"n":"1"}}]}`,
		`{"results":[{"command":"true","mean":0.001,"median":0.001,"min":0.001,"max":0.001}]}`,
		`{"results":[{"command":"x","mean":-1,"times":[-1,1e300]}]}`, `{"results":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := readHyperfine(bytes.NewReader(data), "fuzz.json", "r1", "cmds", time.Unix(0, 0))
		if err == nil {
			checkImported(t, r)
		}
	})
}

// FuzzDecode feeds arbitrary bytes to run.json loading: no panic, and a run it accepts has the
// current schema, values CheckValues accepts, and encodes again.
func FuzzDecode(f *testing.F) {
	v := 12.5
	r := &Run{Schema: Schema, ID: "20240101-000000-abcd", Scenarios: []Scenario{{Benchmark: "b", Scenario: "x=1", Status: StatusOK,
		Metrics: map[string]Metric{"latency_ms": SampleMetric("latency_ms", []float64{1, 2, 3, 4, 5, 6, 7}), "requests_per_s": {Unit: "1/s", Value: &v}}}}}
	b, _ := json.Marshal(r)
	f.Add(b)
	f.Add([]byte(`{"schema":"` + Schema + `","scenarios":[{"benchmark":"b","metrics":{"latency_ms":{"value":-1}}}]}`))
	f.Add([]byte(`{"schema":"other"}`))
	f.Add([]byte(`{"schema":`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode(data, "run.json")
		if err != nil {
			return
		}
		if r.Schema != Schema {
			t.Fatalf("accepted schema %q", r.Schema)
		}
		if err := r.CheckValues(); err != nil {
			t.Fatalf("accepted a value CheckValues refuses: %v", err)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("accepted run does not encode: %v", err)
		}
	})
}

// FuzzJournal feeds arbitrary bytes as a killed run's journal (scenarios.journal.jsonl) to
// what Load reads it with: no panic; a journal it accepts adds after the run's own scenarios
// only scenarios of new ids that name their benchmark, with values CheckValues accepts, and the
// run's summary counts them and the run encodes; one it refuses leaves the run as it was.
func FuzzJournal(f *testing.F) {
	one := 1.0
	sc := func(name string) Scenario {
		return Scenario{Benchmark: "b", Scenario: name, Status: StatusOK,
			Metrics: map[string]Metric{"throughput_ips": {Unit: "items/s", Better: "higher", Value: &one}, "latency_ms": {Unit: "ms", Better: "lower", Samples: []float64{1, 2}}}}
	}
	line := func(name string) string {
		s := sc(name)
		b, _ := json.Marshal(&s)
		return string(b) + "\n"
	}
	for _, s := range []string{
		line("s0") + line("s2") + line("s3"), line("s2") + line("s3")[:40], line("s2") + "{not json\n" + line("s3"),
		strings.Replace(line("s2"), `"samples":[1,2]`, `"samples":[1,-2]`, 1), "\n\n", "null\n", line("s2") + "{}\n",
		`{"benchmark":"b","scenario":"s9","status":"failed","error":"x"}` + "\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &Run{Schema: Schema, ID: "20260101_000000-abcdefgh", Partial: true, Scenarios: []Scenario{sc("s0"), sc("s1")}}
		r.Tally()
		before, _ := json.Marshal(r)
		if err := addJournal(JournalFile, data, r); err != nil {
			if after, _ := json.Marshal(r); !bytes.Equal(before, after) {
				t.Fatalf("a refused journal (%v) changed the run", err)
			}
			return
		}
		seen := map[string]bool{}
		for i, s := range r.Scenarios {
			if seen[s.ID()] {
				t.Fatalf("scenario %s twice", s.ID())
			}
			seen[s.ID()] = true
			if i < 2 && s.Scenario != "s"+strconv.Itoa(i) || s.Benchmark == "" {
				t.Fatalf("scenario %d is %q of benchmark %q", i, s.Scenario, s.Benchmark)
			}
		}
		if err := r.CheckValues(); err != nil {
			t.Fatalf("accepted a value CheckValues refuses: %v", err)
		}
		if r.Summary.Total != len(r.Scenarios) {
			t.Fatalf("summary counts %d scenarios of %d", r.Summary.Total, len(r.Scenarios))
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("accepted run does not encode: %v", err)
		}
	})
}
