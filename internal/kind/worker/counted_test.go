package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/callgrind"
	"github.com/inferbench/inferbench/internal/explain"
	"github.com/inferbench/inferbench/internal/testkit/require"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// The worker counts around each call of a Python function: the same function counted by another
// worker making the same calls passes (within 0.2%; they agree to a few instructions), the
// function doing 1% more work is a regression, the identity names the interpreter, and the
// first measured call's callgrind file is kept, with the bytecode instructions of each Python
// function in one more call (bytecode.json). The work is read from a file at each call.
func TestCountedPythonFunction(t *testing.T) {
	needPython(t)
	if _, err := callgrind.Find(); err != nil {
		require.Skipf(t, require.Valgrind, "%v", err)
	}
	dir := t.TempDir()
	work := filepath.Join(dir, "n")
	src := "def run_sum(config):\n    with open(config.work) as f:\n        n = int(f.read())\n    s = 0\n    for i in range(n):\n        s += i * i\n    return s\n"
	if err := os.WriteFile(filepath.Join(dir, "fn.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(t.TempDir(), "profiles", "fn")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	spec := subject.Spec{Benchmark: "t", Dir: dir, Params: subject.Params{"file": "fn.py", "function": "run_sum", "work": work},
		Measure: subject.MeasureInstructions, ProfileDir: keep}
	if err := os.WriteFile(work, []byte("10000"), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func(spec subject.Spec) *Worker {
		t.Helper()
		w, err := OpenConfig(ctx, Config{Adapter: "pyfunc", Path: pythonDir(t)}, spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		return w
	}
	w := open(spec)
	batch := func(w *Worker, n int, warmup bool) []float64 {
		t.Helper()
		if err := os.WriteFile(work, []byte(strconv.Itoa(n)), 0o644); err != nil {
			t.Fatal(err)
		}
		obs, err := w.DoBatch(ctx, subject.Request{Warmup: warmup}, 3)
		if err != nil {
			t.Fatal(err)
		}
		var c []float64
		for _, o := range obs {
			if _, ok := o.Values[callgrind.Instructions]; ok == warmup {
				t.Fatalf("warm-up %v, counted %v: %v", warmup, ok, o.Values)
			}
			c = append(c, o.Values[callgrind.Instructions])
		}
		return c
	}
	// Each side in a worker of its own after the same warm-up, as runs are: the count of a call
	// depends on its place in the worker's sequence of calls (a later batch of the same worker
	// counted 1-2% lower, more than 1% more work adds), and is the same at the same place.
	side := func(n int) []float64 {
		spec := spec
		spec.ProfileDir = filepath.Join(t.TempDir(), "profiles", "fn")
		w := open(spec)
		batch(w, 10000, true)
		return batch(w, n, false)
	}
	batch(w, 10000, true)
	base := batch(w, 10000, false)
	again := side(10000)
	heavier := side(10100)
	if base[0] < 1e6 {
		t.Fatalf("a loop of 10,000 additions counted %v instructions, want millions", base)
	}
	run := func(c []float64, id string) *result.Run {
		return &result.Run{ID: id, Scenarios: []result.Scenario{{
			Benchmark: "fn", Scenario: "default", Subject: "worker", Status: result.StatusOK, Counted: w.Identity(),
			Metrics: map[string]result.Metric{callgrind.Instructions: {Unit: "count", Better: "lower", Samples: c}},
		}}}
	}
	rep := compare.Runs(run(base, "a"), run(again, "b"), compare.Config{})
	if r := rep.Rows[0]; rep.Failed() || r.Delta > 0.2 || r.Delta < -0.2 {
		t.Errorf("the same function counted again: %s %+.4f%% (%v against %v), want within 0.2%%", r.Verdict, r.Delta, base, again)
	}
	rep = compare.Runs(run(base, "a"), run(heavier, "c"), compare.Config{})
	if r := rep.Rows[0]; !rep.Failed() || r.Delta < 0.5 {
		t.Errorf("1%% more additions: %s %+.3f%% (%v against %v), want a regression", r.Verdict, r.Delta, base, heavier)
	}
	if id := w.Identity(); id["python"] == "" || id["valgrind"] == "" {
		t.Errorf("identity %v lacks the interpreter or valgrind", id)
	}
	if kept := w.Kept(); len(kept) != 2 || kept[0] != filepath.Join(keep, "callgrind.out") || kept[1] != filepath.Join(keep, "bytecode.json") {
		t.Errorf("kept %q, want %s and bytecode.json", kept, filepath.Join(keep, "callgrind.out"))
	}
	// bytecode.json: the function's bytecode instructions in one call, exact: the loop of
	// 10,000 iterations runs tens of thousands of them.
	b, err := os.ReadFile(filepath.Join(keep, "bytecode.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Source  string
		Exact   bool
		Calls   float64
		Entries []struct {
			Name        string
			Count, Self float64
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range doc.Entries {
		if strings.HasPrefix(e.Name, "run_sum (fn.py:") {
			found = e.Count == 1 && e.Self > 40000 && e.Self < 100000
		}
	}
	if doc.Source != "bytecode" || !doc.Exact || doc.Calls != 1 || !found {
		t.Errorf("bytecode.json %s: want run_sum (fn.py:1) with one call of 40k-100k instructions", b)
	}
}

// A torch model counted in instruction mode is explained by its operators: each worker that
// imported torch writes operators.json (each torch operator between client requests of its own,
// inferbench_worker/operators.py), and explain names the one operator the new model runs once
// more, with its shapes and all of the change. A second counted batch after that pass reads its
// own callgrind file (the pass's dumps come between). The two sides run at once: each imports
// torch under valgrind (about 30 s on a quiet machine).
func TestCountedTorchOperators(t *testing.T) {
	needModule(t, "torch")
	if _, err := callgrind.Find(); err != nil {
		require.Skipf(t, require.Valgrind, "%v", err)
	}
	dir := t.TempDir()
	src := "import torch\n\ntorch.manual_seed(0)\nX = torch.randn(8, 16)\nW = torch.randn(16, 16)\n\n\n" +
		"def run_model(config):\n    with open(config.work) as f:\n        n = int(f.read())\n" +
		"    with torch.inference_mode():\n        y = torch.mm(X, W)\n        for _ in range(n):\n            y = torch.tanh(y)\n        return torch.relu(y).sum()\n"
	if err := os.WriteFile(filepath.Join(dir, "model.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	type side struct {
		dir  string
		kept []string
		obs  []float64
		err  error
	}
	count := func(tanhs int, s *side) {
		work := filepath.Join(t.TempDir(), "n")
		if s.err = os.WriteFile(work, []byte(strconv.Itoa(tanhs)), 0o644); s.err != nil {
			return
		}
		s.dir = filepath.Join(t.TempDir(), "profiles", "model")
		spec := subject.Spec{Benchmark: "t", Dir: dir, Params: subject.Params{"file": "model.py", "function": "run_model", "work": work},
			Measure: subject.MeasureInstructions, ProfileDir: s.dir}
		w, err := OpenConfig(ctx, Config{Adapter: "pyfunc", Path: pythonDir(t)}, spec, nil)
		if err != nil {
			s.err = err
			return
		}
		defer w.Close()
		for _, warm := range []bool{true, false, false} {
			obs, err := w.DoBatch(ctx, subject.Request{Warmup: warm}, 1)
			if err != nil {
				s.err = err
				return
			}
			if !warm {
				s.obs = append(s.obs, obs[0].Values[callgrind.Instructions])
			}
		}
		s.kept = w.Kept()
	}
	var old, nw side
	done := make(chan bool)
	go func() { count(2, &old); done <- true }()
	count(3, &nw)
	<-done
	for _, s := range []side{old, nw} {
		if s.err != nil {
			t.Fatal(s.err)
		}
		if len(s.kept) != 3 || filepath.Base(s.kept[2]) != "operators.json" {
			t.Fatalf("kept %q, want callgrind.out, bytecode.json and operators.json", s.kept)
		}
		// The second batch's count is its call's, not one of the operator pass's dumps (a single
		// operator's, a tenth of it) nor a missing file: within 25% of the first's (a later call
		// of a small model counts some 12% less, its caches warmer).
		if a, b := s.obs[0], s.obs[1]; b < 0.75*a || b > 1.25*a {
			t.Errorf("two counted calls of one model: %v and %v instructions, want about the same", a, b)
		}
	}
	load := func(s side) *explain.Profile {
		t.Helper()
		var rel []string
		for _, f := range s.kept {
			rel = append(rel, filepath.Base(f))
		}
		p, err := explain.Load(s.dir, rel)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	po, pn := load(old), load(nw)
	if po.Source != explain.SourceOperators || len(po.Chunks) != 3 {
		t.Fatalf("profile of source %s with %d chunks, want operators with 3", po.Source, len(po.Chunks))
	}
	x, err := explain.Diff(po, pn, explain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Named) == 0 || x.Named[0].Name != "aten::tanh [8×16]" || x.Named[0].Share < 0.8 || x.Named[0].NewCount != 3 || x.Named[0].OldCount != 2 {
		t.Errorf("named %+v, want aten::tanh [8×16] first, 2 → 3 calls, with at least 80%% of the change", x.Named)
	}
	if same, err := explain.Diff(po, po, explain.Options{}); err != nil || len(same.Named) != 0 {
		t.Errorf("a profile against itself named %+v (%v), want nothing", same.Named, err)
	}
	// The loop around the operator ran once more too: the Python code between the operators,
	// from the bytecode.json each run kept, names run_model beside the operator.
	sc := func(s side) *result.Scenario {
		var rel []string
		for _, f := range s.kept {
			rel = append(rel, filepath.Base(f))
		}
		return &result.Scenario{Benchmark: "t", Scenario: "model", Profiles: rel}
	}
	xs := explain.Runs(old.dir, nw.dir, []explain.Pair{{Old: sc(old), New: sc(nw), Metric: "instructions", DeltaPct: 5}}, explain.Options{})
	if py := xs[0].Python; py == nil || len(py.Named) == 0 || !strings.HasPrefix(py.Named[0].Name, "run_model (") {
		t.Errorf("the Python code between the operators: %+v (%s), want run_model named", py, xs[0].Missing)
	}
}

// The operator pass of a worker that imported torch makes dumps of its own after the counted
// calls, which it reads and removes: the reply says how many, and the next counted calls' files
// are read after them (callgrind numbers a process's dumps in order).
func TestCountedSkipsOtherDumps(t *testing.T) {
	tmp := t.TempDir()
	file := func(n, ir int) {
		t.Helper()
		body := fmt.Sprintf("version: 1\ncreator: callgrind-3.19.0\npositions: line\nevents: Ir\nsummary: %d\n\nfn=f\n0 %d\n\ntotals: %d\n", ir, ir, ir)
		if err := os.WriteFile(filepath.Join(tmp, "callgrind.out."+strconv.Itoa(n)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file(1, 1000)
	file(4, 2000) // .2 and .3 were the operator pass's, gone
	k := &counter{tmp: tmp}
	for i, want := range []float64{1000, 2000} {
		obs := make([]subject.Observation, 1)
		rr := &runReply{Counted: 1}
		if i == 0 {
			rr.OtherDumps = 2
		}
		if err := k.attach(rr, obs); err != nil {
			t.Fatalf("batch %d: %v", i+1, err)
		}
		if got := obs[0].Values[callgrind.Instructions]; got != want {
			t.Errorf("batch %d counted %v, want %v", i+1, got, want)
		}
	}
}

// A counted worker runs with one OpenMP thread unless its environment says otherwise, and is
// told callgrind's output file, whose numbered dumps its operator pass reads back.
func TestCountedEnvironment(t *testing.T) {
	if _, err := callgrind.Find(); err != nil {
		require.Skipf(t, require.Valgrind, "%v", err)
	}
	get := func(env []string, key string) []string {
		var vals []string
		for _, kv := range env {
			if k, v, _ := strings.Cut(kv, "="); k == key {
				vals = append(vals, v)
			}
		}
		return vals
	}
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"PATH=/bin"}, "1"},                      // set where nothing says
		{[]string{"PATH=/bin", "OMP_NUM_THREADS=4"}, "4"}, // the definition's or the caller's kept
	} {
		k, _, env, err := countedCommand(context.Background(), subject.Spec{}, &Config{Command: []string{"python3"}}, []string{"python3"}, tc.env)
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(k.tmp)
		if got := get(env, "OMP_NUM_THREADS"); len(got) != 1 || got[0] != tc.want {
			t.Errorf("env %q: OMP_NUM_THREADS %q, want %q once", tc.env, got, tc.want)
		}
		if got := get(env, "INFERBENCH_WORKER_CALLGRIND_OUT"); len(got) != 1 || got[0] != filepath.Join(k.tmp, "callgrind.out") {
			t.Errorf("INFERBENCH_WORKER_CALLGRIND_OUT %q, want %s", got, filepath.Join(k.tmp, "callgrind.out"))
		}
	}
}
