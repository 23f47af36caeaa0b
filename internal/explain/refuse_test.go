//go:build unix

package explain

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
)

// TestLoadRefuses: a run folder may come from anywhere (a CI artifact), and compare and the
// dashboard explain what it holds. Each case is a clear error naming the file, at once: no
// path read outside the run folder, no named pipe opened (it would block), no device or gzip
// bomb read until memory runs out, no corrupt cost printed as NaN, +InfG or 300 digits, no
// callgrind file cut before its totals read as a real -100%. Before, each was read.
func TestLoadRefuses(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "run")
	write := func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	good, err := os.ReadFile(filepath.Join("testdata", "callgrind.out.old"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(parent, "victim"), 0o755)
	os.WriteFile(filepath.Join(parent, "victim", "callgrind.out"), good, 0o644)
	write("profiles/ok/callgrind.out", good)
	os.Symlink("../../../victim/callgrind.out", filepath.Join(dir, "profiles", "ok", "callgrind.out.2"))
	os.MkdirAll(filepath.Join(dir, "profiles", "zero"), 0o755)
	os.Symlink("/dev/zero", filepath.Join(dir, "profiles", "zero", "cpu.pprof"))
	os.MkdirAll(filepath.Join(dir, "profiles", "fifo"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(dir, "profiles", "fifo", "callgrind.out"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A gzip bomb: zeros that inflate beyond the limit (lowered to 1 MiB here: the race
	// detector makes inflating 64 MiB slow).
	old := inflateLimit
	inflateLimit = 1 << 20
	t.Cleanup(func() { inflateLimit = old })
	var bomb bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&bomb, gzip.BestSpeed)
	gz.Write(make([]byte, 2<<20))
	gz.Close()
	write("profiles/bomb/cpu.pprof", bomb.Bytes())
	// A file over the size limit, sparse: nothing is written or read.
	write("profiles/big/callgrind.out", nil)
	if err := os.Truncate(filepath.Join(dir, "profiles", "big", "callgrind.out"), MaxProfileSize+1); err != nil {
		t.Fatal(err)
	}
	cut := good[:bytes.Index(good, []byte("totals:"))]
	write("profiles/cut/callgrind.out", cut)
	write("profiles/nan/callgrind.out", []byte("events: Ir\nfn=a\n3 NaN\ntotals: 0\n"))
	write("profiles/inf/callgrind.out", []byte("events: Ir\nfn=a\n3 +Inf\ntotals: 0\n"))
	write("profiles/huge/callgrind.out", []byte("events: Ir\nfn=a\n3 1"+strings.Repeat("0", 300)+"\ntotals: 0\n"))
	write("profiles/neg/callgrind.out", []byte("events: Ir\nfn=a\n3 -5\ntotals: 0\n"))
	write("profiles/calls/callgrind.out", []byte("events: Ir\nfn=a\ncfn=b\ncalls=NaN 3\n3 5\n3 1\ntotals: 1\n"))
	write("profiles/altered/callgrind.out", []byte("events: Ir\nfn=a\n3 5\n4 6\ntotals: 5\n"))
	write("profiles/sum/callgrind.out", []byte("events: Ir\nfn=a\n3 9007199254740992\n4 9007199254740992\ntotals: 0\n"))
	write("profiles/bc/bytecode.json", []byte(`{"source": "bytecode", "unit": "op", "exact": true, "calls": 1,
 "entries": [{"name": "f", "self": 1e300, "incl": 1e300}]}`))
	write("profiles/bcnan/bytecode.json", []byte("{\"source\": \"bytecode\", \"unit\": \"op\", \"calls\": 1,\n \"entries\": [\n{\"name\": \"f\", \"self\": NaN}]}"))
	write("profiles/ops/operators.json", []byte(`{"source": "operators", "unit": "Ir", "exact": true, "chunks": [{"calls": 1,
 "entries": [{"name": "aten::mm", "self": 1, "incl": 1}], "stacks": {"aten::mm": 1e300}}]}`))
	for _, tc := range []struct {
		name  string
		files []string
		want  string
	}{
		{"parent", []string{"../victim/callgrind.out"}, "leads outside the folder"},
		{"absolute", []string{filepath.Join(parent, "victim", "callgrind.out")}, "leads outside the folder"},
		{"link out", []string{"profiles/ok/callgrind.out", "profiles/ok/callgrind.out.2"}, "leads outside the folder"},
		{"link to a device", []string{"profiles/zero/cpu.pprof"}, "leads outside the folder"},
		{"named pipe", []string{"profiles/fifo/callgrind.out"}, "a named pipe, not a regular file"},
		{"gzip bomb", []string{"profiles/bomb/cpu.pprof"}, "profiles/bomb/cpu.pprof: inflates to more than 1 MiB"},
		{"over the size limit", []string{"profiles/big/callgrind.out"}, "profiles/big/callgrind.out: 268435457 bytes, over the limit of 256 MiB"},
		{"cut before its totals", []string{"profiles/cut/callgrind.out"}, "no totals: line after line"},
		{"NaN", []string{"profiles/nan/callgrind.out"}, `profiles/nan/callgrind.out: line 3: cost "NaN": not a count`},
		{"Inf", []string{"profiles/inf/callgrind.out"}, `line 3: cost "+Inf": not a count`},
		{"300 digits", []string{"profiles/huge/callgrind.out"}, "line 3: cost"},
		{"negative", []string{"profiles/neg/callgrind.out"}, `line 3: cost "-5": not a count`},
		{"call count", []string{"profiles/calls/callgrind.out"}, `line 4: call count "NaN"`},
		{"totals that are not the sum", []string{"profiles/altered/callgrind.out"}, "line 5: totals 5, but the cost lines sum to 11"},
		{"a sum over 2^53", []string{"profiles/sum/callgrind.out"}, "line 4: the costs sum to over"},
		{"bytecode 1e300", []string{"profiles/bc/bytecode.json"}, `profiles/bc/bytecode.json: entries[0] ("f"): self: 1e+300 is beyond`},
		{"bytecode NaN", []string{"profiles/bcnan/bytecode.json"}, "profiles/bcnan/bytecode.json: decode profile chunk: line 3: invalid character 'N'"},
		{"operators' stacks", []string{"profiles/ops/operators.json"}, `chunk 1: stacks["aten::mm"]: 1e+300 is beyond`},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := Load(dir, tc.files)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "callgrind.out") && !strings.Contains(err.Error(), dir) {
				t.Errorf("%s: %v does not name the run folder's file", tc.name, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: Load hangs", tc.name)
		}
	}
	// The good file still loads.
	if _, err := Load(dir, []string{"profiles/ok/callgrind.out"}); err != nil {
		t.Errorf("a file of the run folder: %v", err)
	}
	// Through Runs (explain, compare, the dashboard): the scenario is not explained, says why,
	// and is marked unreadable (explain exits 1).
	sc := &result.Scenario{Benchmark: "b", Scenario: "s", Profiles: []string{"profiles/ok/callgrind.out"}}
	bad := &result.Scenario{Benchmark: "b", Scenario: "s", Profiles: []string{"profiles/cut/callgrind.out"}}
	xs := Runs(dir, dir, []Pair{{Old: sc, New: bad, Metric: "instructions", DeltaPct: -100}}, Options{})
	if len(xs) != 1 || xs[0].Explanation != nil || !xs[0].Unreadable || !strings.Contains(xs[0].Missing, "no totals: line") {
		t.Errorf("Runs with a cut file: %+v, want it unexplained and unreadable", xs)
	}
	none := &result.Scenario{Benchmark: "b", Scenario: "s"}
	if xs := Runs(dir, dir, []Pair{{Old: none, New: sc}}, Options{}); xs[0].Unreadable {
		t.Errorf("a run without profiles is not an unreadable profile: %+v", xs[0])
	}
}
