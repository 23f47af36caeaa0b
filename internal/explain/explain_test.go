package explain

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/inferbench/inferbench/result"
)

// testdata/callgrind.out.old and .new are valgrind 3.19's callgrind of testdata/callgrind.c (gcc
// -O1 -g), without and with an argument: grow loops twice as long with one. The old file is
// written with --compress-strings=no --compress-pos=no, the new one compressed (the default).
func TestCallgrind(t *testing.T) {
	old, err := Load("testdata", []string{"callgrind.out.old"})
	if err != nil {
		t.Fatal(err)
	}
	nw, err := Load("testdata", []string{"callgrind.out.new"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Profile{old, nw} {
		if p.Source != SourceCallgrind || !p.Exact || len(p.Chunks) != 1 || p.Chunks[0].Calls != 1 {
			t.Fatalf("profile %+v: want one exact callgrind chunk of one call", p)
		}
		c := p.Chunks[0]
		// mid calls leaf twice (n and n/2) and does little itself: inclusive is its own plus
		// the calls'.
		if got, want := c.Incl["mid"], c.Self["mid"]+c.Incl["leaf"]; got != want {
			t.Errorf("mid inclusive %v, want self %v + leaf's %v", got, c.Self["mid"], c.Incl["leaf"])
		}
		if c.Count["leaf"] != 2 {
			t.Errorf("leaf called %v times, want 2", c.Count["leaf"])
		}
		// fib's recursive levels (fib'2 ...) are one function, whose inclusive cost is what
		// main's call of it costs.
		if _, ok := c.Self["fib'2"]; ok {
			t.Error(`fib'2 is an entry: want the recursive levels merged into fib`)
		}
		if c.Incl["fib"] < c.Self["fib"] || c.Self["fib"] == 0 {
			t.Errorf("fib self %v incl %v", c.Self["fib"], c.Incl["fib"])
		}
	}
	if d := nw.Chunks[0].Self["grow"] - old.Chunks[0].Self["grow"]; d < 50000 || d > 70000 {
		t.Errorf("grow's own instructions grew by %v, want about 60000 (10000 more iterations)", d)
	}
	x, err := Diff(old, nw, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Named) == 0 || x.Named[0].Name != "grow" || x.Named[0].Share < 0.99 || x.Named[0].Q != 0 {
		t.Fatalf("named %+v: want grow first with all of the change, exact", x.Named)
	}
	s := Scenario{Metric: "instructions", DeltaPct: 19.9, Explanation: x}
	if h := s.Headline(); !strings.HasPrefix(h, "instructions +19.9%; explained 100%: `grow` +60k Ir per call (100%)") {
		t.Errorf("headline %q", h)
	}
	// The flame graph: main's frame holds grow, and grow's frame grew.
	var find func(n *Node, name string) *Node
	find = func(n *Node, name string) *Node {
		if n.Name == name {
			return n
		}
		for _, c := range n.Children {
			if f := find(c, name); f != nil {
				return f
			}
		}
		return nil
	}
	g := find(x.Flame, "grow")
	if g == nil || g.New-g.Old < 50000 {
		t.Fatalf("flame graph's grow frame %+v: want it grown by about 60000", g)
	}
}

// TestCallgrindErrors: a malformed file is an error naming the line, not a silent zero.
func TestCallgrindErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"cost before fn", "events: Ir\n3 100\n", "line 2: a cost line before any fn="},
		{"unknown id", "events: Ir\nfn=(4)\n3 100\n", "compression id used before it is defined"},
		{"bad cost", "events: Ir\nfn=a\n3 1x0\n", "line 3: cost"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "callgrind.out"), []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(dir, []string{"callgrind.out"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// writePprof writes a CPU profile whose samples carry the chunk labels: per chunk, the stacks'
// nanoseconds.
func writePprof(t testing.TB, dir string, chunks []map[string]int64, calls int) {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 1e7,
	}
	fns := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l := fns[name]; l != nil {
			return l
		}
		f := &profile.Function{ID: uint64(len(fns) + 1), Name: name}
		l := &profile.Location{ID: uint64(len(fns) + 1), Line: []profile.Line{{Function: f}}}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, l)
		fns[name] = l
		return l
	}
	for i, c := range chunks {
		for stack, ns := range c {
			frames := strings.Split(stack, ";")
			var locs []*profile.Location
			for j := len(frames) - 1; j >= 0; j-- {
				locs = append(locs, loc(frames[j]))
			}
			p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{ns / 1e7, ns},
				Label: map[string][]string{LabelChunk: {fmt.Sprint(i + 1)}, LabelCalls: {fmt.Sprint(calls)}}})
		}
	}
	// A sample of another goroutine (no labels) is not the function's.
	p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc("runtime.gcBgMarkWorker")}, Value: []int64{100, 1e9}})
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cpu.pprof"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPprof(t *testing.T) {
	dir := t.TempDir()
	h := harnessPrefix + "Profile.func1"
	writePprof(t, dir, []map[string]int64{
		{h + ";main.infer;main.matmul": 40e6, h + ";main.infer": 10e6},
		{h + ";main.infer;main.matmul": 60e6, h + ";main.infer": 20e6},
	}, 10)
	p, err := Load(dir, []string{"profiles/x/heap.pprof", "cpu.pprof"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Chunks) != 2 || p.Chunks[0].Calls != 10 {
		t.Fatalf("chunks %+v: want 2 of 10 calls", p.Chunks)
	}
	c := p.Chunks[1]
	if c.Self["main.matmul"] != 60 || c.Incl["main.infer"] != 80 || c.Self["main.infer"] != 20 {
		t.Errorf("chunk 2: self %v incl %v, want matmul 60 ms own, infer 80 ms with it", c.Self, c.Incl)
	}
	if _, ok := c.Self["runtime.gcBgMarkWorker"]; ok {
		t.Error("an unlabelled sample was counted")
	}
	// Stacks start at the function the harness called, per call: (40+60)/20 ms.
	if got := p.Stacks["main.infer;main.matmul"]; math.Abs(got-5) > 1e-9 {
		t.Errorf("stacks %v: want main.infer;main.matmul at 5 ms per call", p.Stacks)
	}
}

// TestNoProfile: a scenario without the files explain reads says how to get them.
func TestNoProfile(t *testing.T) {
	_, err := Load(t.TempDir(), []string{"profiles/x/torch_trace.json", "profiles/x/memory_top.txt"})
	if err != ErrNoProfile {
		t.Errorf("error %v, want ErrNoProfile", err)
	}
}

// synthetic returns a profile of k chunks of 20 functions costing 1 ms per call each (f07 1.1
// with inject), each chunk's costs off by noise (relative, normal).
func synthetic(rng *rand.Rand, k int, inject string, noise float64) *Profile {
	p := &Profile{Source: SourcePython, Unit: "ms", Stacks: map[string]float64{}}
	for range k {
		c := newChunk(50)
		for f := range 20 {
			name := fmt.Sprintf("f%02d (bench.py:%d)", f, 10+f)
			v := 50.0
			if name[:3] == inject {
				v *= 1.1
			}
			v *= 1 + noise*rng.NormFloat64()
			c.Self[name], c.Incl[name], c.Count[name] = v, v, 50
		}
		p.Chunks = append(p.Chunks, c)
	}
	return p
}

// TestDiffNoise: with 2% noise per chunk of 8, a +10% function is named first with nearly all of the
// change, and unchanged pairs name nothing.
func TestDiffNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	first, clean := 0, 0
	const trials = 50
	for range trials {
		x, err := Diff(synthetic(rng, 8, "", 0.02), synthetic(rng, 8, "f07", 0.02), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(x.Named) > 0 && strings.HasPrefix(x.Named[0].Name, "f07") && x.Named[0].Share >= 0.8 {
			first++
		}
		y, _ := Diff(synthetic(rng, 8, "", 0.02), synthetic(rng, 8, "", 0.02), Options{})
		if len(y.Named) == 0 {
			clean++
		}
	}
	if first < trials*9/10 || clean < trials*95/100 {
		t.Errorf("injected first in %d of %d, unchanged pairs clean in %d: want at least 90%% and 95%%", first, trials, clean)
	}
}

// TestDiffOneChunk: one chunk per run cannot be tested: nothing is named, and a warning says why.
func TestDiffOneChunk(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x, err := Diff(synthetic(rng, 1, "", 0), synthetic(rng, 1, "f03", 0.01), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Named) != 0 || len(x.Warnings) == 0 {
		t.Errorf("named %v warnings %v: want none named and a warning", x.Named, x.Warnings)
	}
}

// TestDiffAddedRemoved: a function only in one run is listed as added or removed and, when it
// is the change, named.
func TestDiffAddedRemoved(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	old, nw := synthetic(rng, 5, "", 0.01), synthetic(rng, 5, "", 0.01)
	for i := range nw.Chunks {
		nw.Chunks[i].Self["validate (bench.py:90)"] = 20 + rng.Float64()
		nw.Chunks[i].Incl["validate (bench.py:90)"] = 20.5
		old.Chunks[i].Self["legacy (bench.py:95)"] = 5 * (1 + 0.01*rng.NormFloat64())
		old.Chunks[i].Incl["legacy (bench.py:95)"] = 5
	}
	x, err := Diff(old, nw, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Named) == 0 || x.Named[0].Name != "validate (bench.py:90)" || x.Named[0].Status != "added" {
		t.Errorf("named %+v: want validate first, added", x.Named)
	}
	found := false
	for _, e := range append(x.Named, x.Removed...) {
		found = found || e.Name == "legacy (bench.py:95)" && e.Status == "removed"
	}
	if !found {
		t.Errorf("named %v removed %v: want legacy removed", x.Named, x.Removed)
	}
}

// TestChunkJSON: the worker's chunks, cProfile's edges folded into stacks.
func TestChunkJSON(t *testing.T) {
	dir := t.TempDir()
	for i, pre := range []float64{2, 2.2} {
		js := fmt.Sprintf(`{"source":"python","unit":"ms","calls":4,
 "entries":[{"name":"run (w.py:1)","count":4,"self":0.4,"incl":%[1]v},
            {"name":"preprocess (bench.py:3)","count":4,"self":%[2]v,"incl":%[2]v},
            {"name":"infer (bench.py:9)","count":8,"self":6,"incl":6}],
 "edges":[{"caller":"run (w.py:1)","callee":"preprocess (bench.py:3)","incl":%[2]v},
          {"caller":"run (w.py:1)","callee":"infer (bench.py:9)","incl":6}]}`, 6.4+pre, pre)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("python-%d.json", i+1)), []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Load(dir, []string{"python.prof", "python-1.json", "python-2.json"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Chunks) != 2 || p.Source != SourcePython || p.Chunks[1].Self["preprocess (bench.py)"] != 2.2 { // a function by its identity: no line
		t.Fatalf("profile %+v", p)
	}
	// (2 + 2.2) ms over 8 calls.
	if got := p.Stacks["run (w.py);preprocess (bench.py)"]; math.Abs(got-0.525) > 1e-9 {
		t.Errorf("stacks %v: want run;preprocess 0.525 ms per call", p.Stacks)
	}
	if got := p.Stacks["run (w.py)"]; math.Abs(got-0.1) > 1e-9 {
		t.Errorf("run's own 0.4 ms per chunk of 4: got %v per call", got)
	}
	bad := filepath.Join(dir, "torch-1.json")
	os.WriteFile(bad, []byte(`{"source":"torch","unit":"ms","calls":0}`), 0o644)
	if _, err := Load(dir, []string{"torch-1.json"}); err == nil || !strings.Contains(err.Error(), "torch-1.json") || !strings.Contains(err.Error(), `"calls"`) {
		t.Errorf("error %v: want the file and the calls named", err)
	}
}

func TestHeadline(t *testing.T) {
	x := &Explanation{Unit: "ms", Explained: 0.85, Named: []Entry{
		{Name: "aten::addmm [8×64, 64×128]", Delta: 0.41, Share: 0.64},
		{Name: "preprocess (bench.py:3)", Delta: 0.09, Share: 0.21},
	}}
	s := Scenario{Metric: "latency_ms", DeltaPct: 12.1, Explanation: x}
	want := "latency_ms +12.1%; explained 85%: `aten::addmm` [8×64, 64×128] +0.41 ms per call (64%), `preprocess` (bench.py:3) +90 µs (21%)"
	if got := s.Headline(); got != want {
		t.Errorf("headline\n got %s\nwant %s", got, want)
	}
	s = Scenario{Metric: "latency_ms", DeltaPct: 20, Missing: "the old run has no profile of b/s: " + HowTo}
	if got := s.Headline(); !strings.Contains(got, "--profile") {
		t.Errorf("headline %q: want how to get profiles", got)
	}
}

// testdata/bytecode/{old,new}/bytecode.json are the worker's bytecode counts of gen.py (grow's
// loop 10% longer in new); old also holds a callgrind file, as a counted worker keeps both: the
// Python functions are read, and named without a test, their counts being exact.
func TestBytecode(t *testing.T) {
	old, err := Load("testdata/bytecode/old", []string{"callgrind.out", "bytecode.json"})
	if err != nil {
		t.Fatal(err)
	}
	nw, err := Load("testdata/bytecode/new", []string{"bytecode.json"})
	if err != nil {
		t.Fatal(err)
	}
	if old.Source != SourceBytecode || old.Unit != "op" || !old.Exact || len(old.Files) != 1 || old.Files[0] != "bytecode.json" {
		t.Fatalf("old profile: source %q unit %q exact %v files %v: want the exact bytecode counts read, not the callgrind file", old.Source, old.Unit, old.Exact, old.Files)
	}
	x, err := Diff(old, nw, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Named) != 1 || x.Named[0].Name != "grow (gen.py)" || x.Named[0].Share < 0.99 {
		t.Fatalf("named %+v: want only grow, with all of the change", x.Named)
	}
	s := Scenario{Metric: "instructions", DeltaPct: 4, Explanation: x}
	if h := s.Headline(); h != "instructions +4.0%; explained 100%: `grow` (gen.py) +1100 op per call (100%)" {
		t.Errorf("headline %q", h)
	}
	y, err := Diff(old, old, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(y.Named) != 0 {
		t.Errorf("the same counts named %+v", y.Named)
	}
}

// A counted worker's run from before bytecode.json, against a newer one that keeps both files:
// the two compare on what both kept, the callgrind file.
func TestBytecodeAgainstCallgrindOnly(t *testing.T) {
	old := &result.Scenario{Benchmark: "b", Scenario: "s", Profiles: []string{"callgrind.out.old"}}
	nw := &result.Scenario{Benchmark: "b", Scenario: "s", Profiles: []string{"callgrind.out.new", "bytecode/new/bytecode.json"}}
	xs := Runs("testdata", "testdata", []Pair{{Old: old, New: nw, Metric: "instructions", DeltaPct: 20}}, Options{})
	if xs[0].Explanation == nil {
		t.Fatalf("not explained: %s", xs[0].Missing)
	}
	if x := xs[0].Explanation; x.Source != SourceCallgrind || len(x.Named) == 0 || x.Named[0].Name != "grow" {
		t.Errorf("source %s, named %+v: want the callgrind files compared, grow named", x.Source, x.Named)
	}
}

// TestCallgrindChunkPerFolder: the callgrind files of one folder are one counted run, a chunk;
// a command keeps several runs, one a folder (issue 34).
func TestCallgrindChunkPerFolder(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "callgrind.out.old"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"callgrind.out", "callgrind.out.2", "iteration-2/callgrind.out", "iteration-2/callgrind.out.2"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Load(dir, []string{"iteration-2/callgrind.out.2", "callgrind.out", "iteration-2/callgrind.out", "callgrind.out.2"})
	if err != nil {
		t.Fatal(err)
	}
	one, err := Load("testdata", []string{"callgrind.out.old"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Chunks) != 2 {
		t.Fatalf("%d chunks, want 2: one per folder", len(p.Chunks))
	}
	for i, c := range p.Chunks {
		if c.Calls != 1 || c.Self["grow"] != 2*one.Chunks[0].Self["grow"] {
			t.Errorf("chunk %d: %v calls, grow %v: want one call of two processes, grow %v", i, c.Calls, c.Self["grow"], 2*one.Chunks[0].Self["grow"])
		}
	}
}

// counted returns an exact profile of k counted runs of a program of 20 functions of 360k
// instructions each (inject's 10% more), with what a Go program's runtime adds: a search of the
// page allocator in some runs only (0 or 45k to 90k instructions) and stack walks of 40k ± 20k.
func counted(rng *rand.Rand, k, inject int) *Profile {
	p := &Profile{Source: SourceCallgrind, Unit: "Ir", Exact: true, Stacks: map[string]float64{}}
	for range k {
		c := newChunk(1)
		for f := range 20 {
			v := 360000.0
			if f == inject {
				v *= 1.1
			}
			name := fmt.Sprintf("main.f%02d", f)
			c.Self[name], c.Incl[name], c.Count[name] = v, v, 1
		}
		if rng.IntN(2) == 0 {
			c.Self["runtime.(*pageAlloc).find"] = 45000 + 45000*rng.Float64()
		}
		c.Self["runtime.pcvalue"] = 40000 + 20000*rng.NormFloat64()
		c.Self["runtime.main"] = 200000
		p.Chunks = append(p.Chunks, c)
	}
	return p
}

// TestDiffCountsThatVary: in an exact profile of several counted runs, an entry whose count
// varies between the runs of one profile is noise to be tested, not an exact change: unchanged
// pairs name nothing, and a +10% function is named first with all of the change (issue 34).
func TestDiffCountsThatVary(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const trials = 50
	for i := range trials {
		y, err := Diff(counted(rng, 5, -1), counted(rng, 5, -1), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(y.Named) > 0 {
			t.Fatalf("unchanged pair %d named %+v: want nothing", i, y.Named)
		}
		if y.Varied != 2 {
			t.Errorf("unchanged pair %d: %d entries varied, want 2", i, y.Varied)
		}
		x, err := Diff(counted(rng, 5, -1), counted(rng, 5, i%20), Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("main.f%02d", i%20)
		if len(x.Named) != 1 || x.Named[0].Name != want || x.Named[0].Varies || x.Named[0].Share < 0.8 || x.Named[0].Share > 1.2 {
			t.Fatalf("injected %s: named %+v (denominator %v, rest p %v): want it alone, exact, with all of the change", want, x.Named, x.Denominator, x.RestP)
		}
	}
	// The steady rest's change counts exactly: a +10% function beside a steady one grown by
	// 36k instructions shares the change with it.
	old, nw := counted(rng, 5, -1), counted(rng, 5, 3)
	for i := range nw.Chunks {
		nw.Chunks[i].Self["runtime.main"] += 36000
	}
	x, err := Diff(old, nw, Options{MinShare: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Named) != 0 || math.Abs(x.Denominator-72000) > 1e-6 {
		t.Errorf("named %v, denominator %v: want nothing named above MinShare, the steady change 72000 counted", x.Named, x.Denominator)
	}
	// The text says the varying entries were tested.
	if x, err = Diff(counted(rng, 5, -1), counted(rng, 5, 0), Options{}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Text(&buf, []Scenario{{Scenario: "cmd/default", Metric: "instructions", DeltaPct: 0.5, Explanation: x}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "2 entries varied between a run's chunks, tested") {
		t.Errorf("text %q: want it to say the varying entries were tested", buf.String())
	}
	if !strings.Contains(buf.String(), "(docs/explain.md)") {
		t.Errorf("text %q: want it to name docs/explain.md", buf.String())
	}
	// A baseline of one chunk (made before runs kept several) cannot show which counts vary:
	// the explanation says so when the other run's counts do; runs of several chunks each do not.
	x, err = Diff(counted(rng, 1, -1), counted(rng, 5, 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(x.Warnings, "\n"); !strings.Contains(w, "1 and 5 chunks") || !strings.Contains(w, "may be noise") {
		t.Errorf("one chunk against five: warnings %q", x.Warnings)
	}
	if x, err = Diff(counted(rng, 5, -1), counted(rng, 5, 0), Options{}); err != nil || len(x.Warnings) != 0 {
		t.Errorf("five chunks each: warnings %q (err %v), want none", x.Warnings, err)
	}
}

// TestFoldCycle: a path into a cycle from within it carries a share of all the edges into the
// node, not of the few from outside the cycle: CPython's interpreter under callgrind (hundreds
// of C functions calling each other) otherwise multiplied its costs along each turn of a cycle,
// and folding one run of `python3 -c` took 24 GB before it was stopped (issue 34).
func TestFoldCycle(t *testing.T) {
	g := newGraph()
	// main calls eval; eval and call call each other; x calls call a little.
	for n, v := range map[string][2]float64{"main": {0, 1001}, "eval": {400, 1000}, "call": {501, 900}, "x": {0, 1}} {
		g.self[n], g.incl[n] = v[0], v[1]
	}
	g.edge("main", "eval", 1000)
	g.edge("eval", "call", 900)
	g.edge("call", "eval", 500)
	g.edge("x", "call", 1)
	g.edge("main", "x", 1)
	stacks := map[string]float64{}
	g.fold(stacks)
	var cycle float64
	for k, v := range stacks {
		if strings.HasPrefix(k, "main;eval") {
			cycle += v
		}
	}
	if cycle > 2*1000 {
		t.Errorf("stacks %v: main's call of eval folds into %v, want at most twice its 1000", stacks, cycle)
	}
}

// testdata/operators/{old,new}/operators.json are a counted worker's per-operator counts of a
// small torch model (gen.py there, under callgrind), aten::tanh run once more a call in new: the
// operators are read before the bytecode and callgrind files a counted worker also keeps, three
// chunks each, and the one operator is named with its shapes and all of the change.
func TestOperators(t *testing.T) {
	old, err := Load("testdata/operators/old", []string{"callgrind.out", "bytecode.json", "operators.json"})
	if err != nil {
		t.Fatal(err)
	}
	nw, err := Load("testdata/operators/new", []string{"operators.json"})
	if err != nil {
		t.Fatal(err)
	}
	if old.Source != SourceOperators || old.Unit != "Ir" || !old.Exact || len(old.Chunks) != 3 || len(old.Files) != 1 || old.Files[0] != "operators.json" {
		t.Fatalf("old profile: source %q unit %q exact %v, %d chunks, files %v: want operators.json's three chunks of exact counts", old.Source, old.Unit, old.Exact, len(old.Chunks), old.Files)
	}
	x, err := Diff(old, nw, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Named) != 1 || x.Named[0].Name != "aten::tanh [8×16]" || x.Named[0].Share < 0.8 || x.Named[0].OldCount != 3 || x.Named[0].NewCount != 4 {
		t.Fatalf("named %+v: want only aten::tanh [8×16], 3 → 4 calls, with at least 80%% of the change", x.Named)
	}
	s := Scenario{Metric: "instructions", DeltaPct: 12, Explanation: x}
	if h := s.Headline(); !strings.Contains(h, "`aten::tanh` [8×16] +1") {
		t.Errorf("headline %q: want the operator with its shapes", h)
	}
	if y, err := Diff(old, old, Options{}); err != nil || len(y.Named) != 0 {
		t.Errorf("the same counts named %+v (%v)", y.Named, err)
	}
}

// A run kept before operators.json, against one that keeps it: the two compare on what both
// kept, bytecode.json.
func TestOperatorsAgainstBytecodeOnly(t *testing.T) {
	old := &result.Scenario{Benchmark: "b", Scenario: "s", Profiles: []string{"bytecode/old/bytecode.json"}}
	nw := &result.Scenario{Benchmark: "b", Scenario: "s", Profiles: []string{"bytecode/new/bytecode.json", "operators/new/operators.json"}}
	xs := Runs("testdata", "testdata", []Pair{{Old: old, New: nw, Metric: "instructions", DeltaPct: 5}}, Options{})
	if xs[0].Explanation == nil {
		t.Fatalf("not explained: %s", xs[0].Missing)
	}
	if x := xs[0].Explanation; x.Source != SourceBytecode || len(x.Named) == 0 {
		t.Errorf("source %s, named %+v: want the bytecode counts compared", x.Source, x.Named)
	}
}

// A torch worker counted in instruction mode keeps operators.json and bytecode.json: a change in
// its Python code between the operators moves the bytecode counts only. Before, explain read
// operators.json alone and named nothing for it. (The two files come from two test programs,
// testdata/operators and testdata/bytecode: what is tested is which file explains what.)
func TestPythonBetweenOperators(t *testing.T) {
	sc := func(files ...string) *result.Scenario {
		return &result.Scenario{Benchmark: "b", Scenario: "s", Profiles: files}
	}
	explainOne := func(old, nw *result.Scenario) Scenario {
		t.Helper()
		xs := Runs("testdata", "testdata", []Pair{{Old: old, New: nw, Metric: "instructions", DeltaPct: 3}}, Options{})
		if xs[0].Explanation == nil {
			t.Fatalf("not explained: %s", xs[0].Missing)
		}
		return xs[0]
	}
	sameOps := "operators/old/operators.json"

	// The operators held still and the Python code grew: the bytecode counts explain it.
	s := explainOne(sc(sameOps, "bytecode/old/bytecode.json"), sc(sameOps, "bytecode/new/bytecode.json"))
	if x := s.Explanation; x.Source != SourceBytecode || len(x.Named) == 0 || s.Python != nil {
		t.Fatalf("source %s, named %+v, python %+v: want the bytecode counts in the operators' place", x.Source, x.Named, s.Python)
	}
	if w := strings.Join(s.Explanation.Warnings, "; "); !strings.Contains(w, "operators.json") || !strings.Contains(w, "between them") {
		t.Errorf("warnings %q: want a note that the operators held still", w)
	}

	// Both grew: the operators explain, the Python code's change beside them, in every output.
	s = explainOne(sc("operators/old/operators.json", "bytecode/old/bytecode.json"), sc("operators/new/operators.json", "bytecode/new/bytecode.json"))
	if x := s.Explanation; x.Source != SourceOperators || len(x.Named) == 0 || s.Python == nil || s.Python.Source != SourceBytecode || len(s.Python.Named) == 0 {
		t.Fatalf("source %s, named %+v, python %+v: want the operators, and the bytecode counts beside them", x.Source, x.Named, s.Python)
	}
	py := QuoteName(s.Python.Named[0].Name)
	if h := s.Headline(); !strings.Contains(h, "`aten::tanh` [8×16]") || !strings.Contains(h, "the Python code between the operators: "+py) {
		t.Errorf("headline %q: want the operator, then %s", h, py)
	}
	var text, md bytes.Buffer
	if err := Text(&text, []Scenario{s}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, []Scenario{s}); err != nil {
		t.Fatal(err)
	}
	page, err := HTML([]Scenario{s})
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": string(page)} {
		if !strings.Contains(out, "Python bytecode counts") || !strings.Contains(out, "callgrind per torch operator") {
			t.Errorf("%s output does not show both tables:\n%s", name, out)
		}
	}

	// Beside operators that named nothing (kept when they listed an operator added or removed),
	// the headline still gives the Python code's change.
	quiet := Scenario{Metric: "instructions", DeltaPct: 3, Explanation: &Explanation{Source: SourceOperators, Unit: "Ir", Tested: 4}, Python: s.Python}
	if h := quiet.Headline(); !strings.Contains(h, "explained 0%") || !strings.Contains(h, "the Python code between the operators: "+py) {
		t.Errorf("headline %q: want no operator named, then %s", h, py)
	}

	// Only the operators grew: nothing beside them.
	s = explainOne(sc("operators/old/operators.json", "bytecode/old/bytecode.json"), sc("operators/new/operators.json", "bytecode/old/bytecode.json"))
	if s.Explanation.Source != SourceOperators || s.Python != nil {
		t.Errorf("source %s, python %+v: want the operators alone", s.Explanation.Source, s.Python)
	}
}

// A function is matched by its qualified name and file, not its line: an edit above it moves it
// without making it "removed" and "added" (issue 42: every function below an edit ranked before
// the changed one); a function renamed is one function (pairNames), not one removed and one added.
func TestFunctionsByIdentity(t *testing.T) {
	chunk := func(names map[string]float64) string {
		var es []string
		for n, v := range names {
			es = append(es, fmt.Sprintf(`{"name":%q,"count":1,"self":%v,"incl":%v}`, n, v, v))
		}
		return `{"source":"bytecode","unit":"op","calls":1,"exact":true,"entries":[` + strings.Join(es, ",") + `]}`
	}
	load := func(doc string) *Profile {
		p := &Profile{Stacks: map[string]float64{}}
		if err := p.addChunkJSON(strings.NewReader(doc)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := load(chunk(map[string]float64{"_normalize (text.py:20)": 1000, "_bucket (text.py:34)": 5000}))
	// _normalize grew by 10%; _bucket only moved down 3 lines.
	moved := load(chunk(map[string]float64{"_normalize (text.py:20)": 1100, "_bucket (text.py:37)": 5000}))
	x, err := Diff(old, moved, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Named) != 1 || x.Named[0].Name != "_normalize (text.py)" || x.Named[0].Status != "changed" {
		t.Errorf("moved: named %+v, want _normalize alone", x.Named)
	}
	// A rename of a function whose cost did not change names nothing; one that also grew is
	// named as itself, renamed; a function removed and another added of unlike cost are that.
	for _, c := range []struct {
		name    string
		buckets float64 // the new _buckets's cost
		status  map[string]string
	}{
		{"renamed", 5000, map[string]string{}},
		{"renamed and 20% costlier", 6000, map[string]string{"_buckets (text.py), was _bucket": "renamed"}},
		{"replaced", 800, map[string]string{"_bucket (text.py)": "removed", "_buckets (text.py)": "added"}},
	} {
		x, err = Diff(old, load(chunk(map[string]float64{"_normalize (text.py:20)": 1000, "_buckets (text.py:34)": c.buckets})), Options{})
		if err != nil {
			t.Fatal(err)
		}
		status := map[string]string{}
		for _, e := range x.Named {
			status[e.Name] = e.Status
		}
		if fmt.Sprint(status) != fmt.Sprint(c.status) {
			t.Errorf("%s: named %+v, want %v", c.name, x.Named, c.status)
		}
	}
}
