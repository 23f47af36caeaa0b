package result

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/testkit/heaptest"
)

// writePytestFile writes pytest-benchmark JSON of benches benchmarks of rounds raw rounds each
// (--benchmark-save-data) and returns its path and size.
func writePytestFile(t testing.TB, benches, rounds int) (string, int64) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bench.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(`{"machine_info": {"node": "n", "cpu": {"brand_raw": "x"}}, "commit_info": {"id": "abc", "branch": "main"}, "benchmarks": [`)
	var num []byte
	for b := range benches {
		if b > 0 {
			w.WriteString(",")
		}
		fmt.Fprintf(w, `{"group": null, "name": "test_f[%d]", "fullname": "t.py::test_f[%d]", "params": {"n": %d}, "stats": {"min": 0.001, "max": 0.002, "mean": 0.0015, "stddev": 0.0001, "median": 0.0015, "q1": 0.0014, "q3": 0.0016, "rounds": %d, "ops": 666.6, "data": [`, b, b, b, rounds)
		for i := range rounds {
			if i > 0 {
				w.WriteString(", ")
			}
			num = strconv.AppendFloat(num[:0], 0.001+float64(i%1000)*1.234567e-9, 'f', 16, 64)
			w.Write(num)
		}
		w.WriteString("]}}")
	}
	w.WriteString(`], "datetime": "2026-11-30T10:00:00.123456", "version": "4.0.0"}`)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	f.Close()
	return p, fi.Size()
}

// A pytest-benchmark file imports in memory bounded by the run it makes, not by the file: the
// benchmarks are decoded one at a time from a stream (readPytest). Here an 8 MB file of 20
// benchmarks of 20,000 rounds makes 400,000 samples (3.2 MB); the import's heap peaked at 1.05
// to 1.10 times the file (the run, one benchmark's decoding and the garbage not yet collected),
// and must stay under twice. Read whole and then decoded twice (the probe of the format, then
// the importer), as before, it peaked at 4.04 (--format pytest) and 5.06 times (auto) the file
// (a 1 GB file died of out of memory at 4.46 GB).
func TestImportPytestMemory(t *testing.T) {
	path, size := writePytestFile(t, 20, 20000)
	for _, format := range []string{"auto", "pytest"} {
		var r *Run
		var err error
		peak := heaptest.Peak(func() { r, err = ImportFile(path, "bench.json", format, "r1", "", time.Now()) })
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Scenarios) != 20 || len(r.Scenarios[19].Metrics["latency_ms"].Samples) != 20000 {
			t.Fatalf("--format %s: %d scenarios: want 20 of 20000 samples", format, len(r.Scenarios))
		}
		t.Logf("--format %s: file %.1f MB, heap peak %.1f MB (%.2f times)", format, float64(size)/1e6, float64(peak)/1e6, float64(peak)/float64(size))
		if peak > 2*uint64(size) {
			t.Errorf("--format %s: importing a %d-byte file took %d bytes of heap at its peak: want less than twice the file", format, size, peak)
		}
	}
}

// The stream reads what encoding/json's reading of the whole document read: the datetime after
// the benchmarks, keys in another case, a second "benchmarks" replacing the first, unknown keys
// of any shape skipped; and --format auto leaves hyperfine's JSON ("results") and a run.json
// ("schema") to their readers.
func TestImportPytestStreamForms(t *testing.T) {
	bench := `{"name": "test_a[1]", "fullname": "t.py::test_a[1]", "stats": {"rounds": 2, "data": [0.001, 0.002], "ops": 700}}`
	for _, tc := range []struct{ name, src, want string }{
		{"datetime last", `{"benchmarks": [` + bench + `], "datetime": "2026-11-30T10:00:00.5"}`, "test_a/1 2026-11-30 10:00:00.5"},
		{"keys in another case", `{"Datetime": "2026-11-30T10:00:00", "Benchmarks": [` + bench + `]}`, "test_a/1 2026-11-30 10:00:00"},
		{"second benchmarks", `{"benchmarks": [{"name": "x", "stats": {"rounds": 1, "mean": 1}}], "benchmarks": [` + bench + `]}`, "test_a/1 0001-01-01 00:00:00"},
		{"unknown keys", `{"version": {"a": [1, {"b": []}]}, "x": null, "benchmarks": [` + bench + `], "y": [[]]}`, "test_a/1 0001-01-01 00:00:00"},
	} {
		r, err := readPytestBenchmark(strings.NewReader(tc.src), "p.json", "r1")
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := r.Scenarios[0].ID() + " " + r.StartedAt.Format("2006-01-02 15:04:05.999")
		if len(r.Scenarios) != 1 || got != tc.want || r.Scenarios[0].Metrics["latency_ms"].Samples[1] != 2 {
			t.Errorf("%s: %d scenarios, %q, want 1, %q, samples in ms", tc.name, len(r.Scenarios), got, tc.want)
		}
	}
	for _, tc := range []struct{ name, src, want string }{
		{"hyperfine", `{"results": [{"command": "sleep 0", "mean": 0.1, "stddev": 0, "median": 0.1, "min": 0.1, "max": 0.1, "times": [0.1, 0.1]}]}`, "f/sleep 0"},
		{"pytest after results", `{"results": 1, "benchmarks": [` + bench + `]}`, "test_a/1"},
	} {
		p := filepath.Join(t.TempDir(), "f.json")
		os.WriteFile(p, []byte("\n  "+tc.src), 0o644)
		r, err := ImportFile(p, "f.json", "auto", "r1", "f", time.Now())
		if err != nil || len(r.Scenarios) != 1 || r.Scenarios[0].ID() != tc.want {
			t.Errorf("%s: %v, %v: want %s", tc.name, r, err, tc.want)
		}
	}
	for _, tc := range []struct{ name, src, want string }{
		{"truncated", `{"benchmarks": [` + bench, "p.json: not pytest-benchmark JSON: unexpected EOF"},
		{"not an array", `{"benchmarks": 5}`, `"benchmarks" is 5, want an array`},
		{"bad element", `{"benchmarks": [` + bench + `, {"stats": {"rounds": "x"}}]}`, "benchmark 2: json: cannot unmarshal string"},
		{"none", `{"benchmarks": null}`, "p.json: no benchmarks"},
	} {
		if _, err := readPytestBenchmark(strings.NewReader(tc.src), "p.json", "r1"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
