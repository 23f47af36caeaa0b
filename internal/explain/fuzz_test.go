package explain

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkProfile fails t when an accepted profile holds a cost explain could not print: every
// chunk has calls, every cost is finite and within MaxCost.
func checkProfile(t *testing.T, p *Profile) {
	t.Helper()
	for i, c := range p.Chunks {
		if !(c.Calls > 0) || math.IsInf(c.Calls, 0) {
			t.Fatalf("chunk %d: calls %v", i, c.Calls)
		}
	}
	if err := p.checkSums(); err != nil {
		t.Fatalf("accepted profile holds %v", err)
	}
}

// FuzzCallgrind feeds arbitrary text to explain's callgrind reader: it never panics, and a file
// it accepts has finite costs within MaxCost whose sum is its totals line.
func FuzzCallgrind(f *testing.F) {
	for _, name := range []string{"callgrind.out.old", "callgrind.out.new"} {
		if b, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(b[:min(len(b), 4000)]) // a head: cut, refused (the whole file makes each run slow)
		}
	}
	f.Add([]byte("events: Ir\nfn=(1) a\n3 5\ncfn=(2) b\ncalls=2 3\n3 7\nfn=(2)\n4 7\ntotals: 12\n"))
	f.Add([]byte("events: Ir\nfn=a\n3 NaN\ntotals: 0\n"))
	f.Add([]byte("positions: instr line\nevents: Dr Ir\nfn=a'2\n0x10 3 1 9\ntotals: 1 9\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := &Profile{Source: SourceCallgrind, Unit: "Ir", Exact: true, Stacks: map[string]float64{}}
		if err := p.addCallgrind(bytes.NewReader(data)); err != nil {
			return
		}
		p.finishStacks()
		checkProfile(t, p)
	})
}

// FuzzChunkJSON feeds arbitrary bytes to the reader of one chunk (python-K.json, torch-K.json,
// the worker's bytecode.json): it never panics, and an accepted chunk has calls and costs
// explain can print.
func FuzzChunkJSON(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "bytecode", "new", "bytecode.json")); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"source": "python", "unit": "ms", "calls": 3, "entries": [{"name": "f", "self": 1, "incl": 2, "count": 3}], "edges": [{"caller": "g", "callee": "f", "incl": 2}]}`))
	f.Add([]byte(`{"source": "bytecode", "unit": "op", "exact": true, "calls": 1, "entries": [{"name": "f", "self": 1e300}]}`))
	f.Add([]byte(`{"calls": 1, "stacks": {"a;b": -1e20}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := &Profile{Stacks: map[string]float64{}}
		if err := p.addChunkJSON(bytes.NewReader(data)); err != nil {
			return
		}
		p.finishStacks()
		checkProfile(t, p)
	})
}

// FuzzChunksJSON feeds arbitrary bytes to the reader of operators.json (several chunks): it
// never panics, and an accepted file has chunks with calls and costs explain can print.
func FuzzChunksJSON(f *testing.F) {
	if ms, _ := filepath.Glob(filepath.Join("testdata", "operators", "*", "operators.json")); len(ms) > 0 {
		if b, err := os.ReadFile(ms[0]); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"source": "operators", "unit": "Ir", "exact": true, "chunks": [{"calls": 1, "entries": [{"name": "aten::mm [8×64]", "self": 10, "incl": 10, "count": 1}]}, {"calls": 1, "entries": [{"name": "aten::mm [8×64]", "self": 11, "incl": 11, "count": 1}]}]}`))
	f.Add([]byte(`{"chunks": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := &Profile{Stacks: map[string]float64{}}
		if err := p.addChunksJSON(bytes.NewReader(data)); err != nil {
			return
		}
		if len(p.Chunks) == 0 {
			t.Fatal("accepted operators.json without chunks")
		}
		p.finishStacks()
		checkProfile(t, p)
	})
}

// FuzzPprof feeds arbitrary bytes to the Go CPU profile reader (gzip-compressed or not): it
// never panics, inflates within its bound, and an accepted profile has chunks and costs explain
// can print.
func FuzzPprof(f *testing.F) {
	dir := f.TempDir()
	writePprof(f, dir, []map[string]int64{{"main.f;main.g": 2e7, "main.f": 1e7}, {"main.f;main.g": 3e7}}, 10)
	if b, err := os.ReadFile(filepath.Join(dir, "cpu.pprof")); err == nil {
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Add([]byte("--- contention:\ncycles/second=1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ReadPprof(bytes.NewReader(data))
		if err != nil {
			if strings.Contains(err.Error(), "inflates to more than") && len(data) > MaxProfileSize {
				t.Fatal("a profile over the size limit was inflated")
			}
			return
		}
		if len(p.Chunks) == 0 {
			t.Fatal("accepted a profile without chunks")
		}
		checkProfile(t, p)
	})
}
