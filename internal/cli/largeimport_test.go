package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// writeLargePytest writes pytest-benchmark JSON as --benchmark-save-data writes it for a real
// session: benches tests of rounds rounds each, lognormal around 1 ms (50 x 100,000: 98 MB).
func writeLargePytest(b *testing.B, path string, benches, rounds int, seed uint64) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	rng := rand.New(rand.NewPCG(seed, 1))
	w := bufio.NewWriter(f)
	w.WriteString(`{"machine_info": {"node": "n"}, "commit_info": {"id": "abc"}, "benchmarks": [`)
	var num []byte
	for i := range benches {
		if i > 0 {
			w.WriteString(",")
		}
		fmt.Fprintf(w, `{"group": null, "name": "test_f[%d]", "fullname": "t.py::test_f[%d]", "params": {"n": %d}, "stats": {"min": 0.001, "max": 0.002, "mean": 0.001, "stddev": 0.0001, "median": 0.001, "q1": 0.0009, "q3": 0.0011, "rounds": %d, "ops": 1000, "data": [`, i, i, i, rounds)
		for j := range rounds {
			if j > 0 {
				w.WriteString(", ")
			}
			num = strconv.AppendFloat(num[:0], 0.001*math.Exp(0.1*rng.NormFloat64()), 'g', 17, 64)
			w.Write(num)
		}
		w.WriteString("]}}")
	}
	w.WriteString(`], "datetime": "2026-11-30T10:00:00.123456", "version": "5.3.1"}`)
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCompareLargeImports is `inferbench compare` of two imported pytest-benchmark sessions
// the size real ones write: 50 tests of 100,000 rounds each (98 MB of JSON a session), medians by
// Mann-Whitney, p95 and p99 by bootstrap. The imports are setup; each iteration is one compare.
//
//	go test ./internal/cli -run '^$' -bench CompareLargeImports -benchtime 3x
func BenchmarkCompareLargeImports(b *testing.B) {
	dir := b.TempDir()
	env := []string{"CI=1", "PATH=" + os.Getenv("PATH")}
	cli := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), args, IO{Stdout: &out, Stderr: &errOut, Env: env, Dir: dir})
		return code, out.String() + errOut.String()
	}
	for i, id := range []string{"old", "new"} {
		p := filepath.Join(dir, id+".json")
		writeLargePytest(b, p, 50, 100_000, uint64(i+1))
		if code, out := cli("import", p, "--id", id, "--store", "h.db"); code != ExitOK {
			b.Fatalf("import: exit %d\n%s", code, out)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if code, out := cli("compare", "old", "new", "--store", "h.db", "--format", "json", "-o", "cmp.json"); code != ExitOK && code != ExitRegression {
			b.Fatalf("compare: exit %d\n%s", code, out)
		}
	}
}
