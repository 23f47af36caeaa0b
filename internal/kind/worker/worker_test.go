package worker

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/inferbench/inferbench/internal/explain"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/internal/testkit/require"
	"github.com/inferbench/inferbench/subject"
)

// pythonDir is the repository's copy of the Python worker, used instead of the embedded one so
// that tests do not write into the user's cache directory.
func pythonDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.Abs("../../workers/python")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// testPython is the interpreter the workers of these tests run under: the one pyenv.Find picks
// from this process's environment, as a worker started here without `python:` would.
var testPython = pyenv.Find(nil).Path

func needPython(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath(testPython); err != nil {
		require.Skipf(t, require.Frameworks, "%s is not installed: worker processes cannot run", testPython)
	}
}

func needModule(t testing.TB, mod string) {
	t.Helper()
	needPython(t)
	err := exec.Command(testPython, "-c", "import "+mod).Run()
	if err != nil {
		require.Skipf(t, require.Frameworks, "python module %s is not importable by %s: %v", mod, testPython, err)
	}
}

func open(t testing.TB, adapter string, params subject.Params, mod func(*Config)) (*Worker, error) {
	t.Helper()
	needPython(t)
	c := Config{Adapter: adapter, Path: pythonDir(t), Env: map[string]string{"OMP_NUM_THREADS": "1"}}
	if mod != nil {
		mod(&c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w, err := OpenConfig(ctx, c, subject.Spec{Benchmark: "t", Params: params, Dir: t.TempDir()}, nil)
	if err == nil {
		t.Cleanup(func() { w.Close() })
	}
	return w, err
}

func mustOpen(t testing.TB, adapter string, params subject.Params, mod func(*Config)) *Worker {
	t.Helper()
	w, err := open(t, adapter, params, mod)
	if err != nil {
		t.Fatalf("open %s: %v", adapter, err)
	}
	return w
}

func TestNoopLifecycle(t *testing.T) {
	w := mustOpen(t, "noop", subject.Params{"items": 4}, nil)
	d := w.Describe()
	if d["framework"] != "none" || d["adapter"] != "noop" || d["protocol"] != 1 {
		t.Errorf("Describe() = %v", d)
	}
	sv := w.SetupValues()
	for _, k := range []string{"load_time_ms", "startup_ms"} {
		if _, ok := sv[k]; !ok {
			t.Errorf("SetupValues() lacks %s: %v", k, sv)
		}
	}
	if pids := w.PIDs(); len(pids) != 1 || pids[0] <= 0 {
		t.Errorf("PIDs() = %v, want one pid", pids)
	}
	if _, err := w.Do(context.Background(), subject.Request{Warmup: true}); err != nil {
		t.Fatalf("warm-up: %v", err)
	}
	before := time.Now()
	obs, err := w.DoBatch(context.Background(), subject.Request{}, 200)
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 200 {
		t.Fatalf("got %d observations, want 200", len(obs))
	}
	prev := before
	for i, o := range obs {
		lat, ok := o.Values["latency_ms"]
		if !ok {
			t.Fatalf("observation %d has no latency_ms", i)
		}
		if o.Items != 4 {
			t.Errorf("observation %d: Items = %d, want 4", i, o.Items)
		}
		if o.Start.Before(prev) || o.End.Before(o.Start.Add(msDuration(lat))) {
			t.Errorf("observation %d: [%v, %v] does not follow %v or is shorter than its latency %vms", i, o.Start, o.End, prev, lat)
		}
		if _, ok := o.Values["memory_mb"]; !ok {
			t.Errorf("observation %d lacks memory_mb", i)
		}
		prev = o.End
	}
	if prev.After(after) {
		t.Errorf("observations end at %v, after the round trip ended at %v", prev, after)
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if pids := w.PIDs(); len(pids) != 0 {
		t.Errorf("PIDs() after Close = %v", pids)
	}
	if _, err := w.Do(context.Background(), subject.Request{}); err == nil {
		t.Error("Do after Close succeeded")
	}
}

// processError checks that err is a fatal *ProcessError whose message contains want and whose
// stderr tail contains stderr.
func processError(t *testing.T, err error, want, stderr string) {
	t.Helper()
	var pe *ProcessError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v (%T), want a *ProcessError", err, err)
	}
	if !pe.Fatal() {
		t.Error("ProcessError is not fatal")
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
	if !strings.Contains(pe.Stderr, stderr) {
		t.Errorf("stderr tail %q does not contain %q", pe.Stderr, stderr)
	}
}

// TestSetupWarnings: a setup reply's warnings (an adapter saying it could not do all a variant
// asks) reach Warnings, named by the adapter; a setup without any has none.
func TestSetupWarnings(t *testing.T) {
	w := mustOpen(t, "noop", subject.Params{"warn": "kernelized: no layer kernelized"}, nil)
	if diff := cmp.Diff([]string{"noop: kernelized: no layer kernelized"}, w.Warnings()); diff != "" {
		t.Errorf("Warnings() (-want +got):\n%s", diff)
	}
	if got := mustOpen(t, "noop", nil, nil).Warnings(); len(got) != 0 {
		t.Errorf("Warnings() = %q, want none", got)
	}
}

func TestWorkerCrashes(t *testing.T) {
	w := mustOpen(t, "noop", subject.Params{"misbehave": "crash", "misbehave_after": 2}, nil)
	_, err := w.DoBatch(context.Background(), subject.Request{}, 5)
	processError(t, err, "exited during run (exit status 3)", "crashing on purpose")
	// The worker takes no more calls, and says why.
	if _, err2 := w.Do(context.Background(), subject.Request{}); !errors.Is(err2, err) {
		t.Errorf("second call: %v, want the first error again", err2)
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close after a crash: %v", err)
	}
}

func TestWorkerKilledMidRun(t *testing.T) {
	w := mustOpen(t, "noop", subject.Params{"sleep_ms": 20}, nil)
	pid := w.PIDs()[0]
	done := make(chan error, 1)
	go func() {
		_, err := w.DoBatch(context.Background(), subject.Request{}, 500) // 10s if left alone
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	proc, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		processError(t, err, "exited during run (signal: killed)", "")
	case <-time.After(20 * time.Second):
		t.Fatal("DoBatch did not return after the worker was killed")
	}
}

func TestWorkerWritesGarbage(t *testing.T) {
	w := mustOpen(t, "noop", subject.Params{"misbehave": "garbage"}, nil)
	_, err := w.DoBatch(context.Background(), subject.Request{}, 3)
	processError(t, err, `wrote a line that is not a protocol reply: "this is not json"`, "noop misbehaving: garbage")
}

func TestWorkerHangs(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(*Config)
		ctx  time.Duration
		want string
	}{
		// the worker's own per-iteration timeout
		{"iteration timeout", func(c *Config) { c.Timeouts.Iteration = 300 * time.Millisecond }, time.Minute, "did not answer run within 600ms"},
		// the load driver's deadline for the call
		{"context deadline", nil, 500 * time.Millisecond, "run interrupted: context deadline exceeded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := mustOpen(t, "noop", subject.Params{"misbehave": "hang"}, tc.cfg)
			ctx, cancel := context.WithTimeout(context.Background(), tc.ctx)
			defer cancel()
			start := time.Now()
			_, err := w.DoBatch(ctx, subject.Request{}, 2)
			processError(t, err, tc.want, "noop misbehaving: hang")
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("a hanging worker took %v to fail", d)
			}
		})
	}
}

func TestStructuredErrors(t *testing.T) {
	// An exception in the adapter fails the iteration, not the worker.
	w := mustOpen(t, "noop", subject.Params{"misbehave": "raise"}, nil)
	_, err := w.Do(context.Background(), subject.Request{})
	var we *Error
	if !errors.As(err, &we) {
		t.Fatalf("err = %v (%T), want *Error", err, err)
	}
	if we.Code != "failed" || !strings.Contains(we.Traceback, "RuntimeError: noop told to raise") || we.SkipReason() != "" {
		t.Errorf("error = %+v", we)
	}
	if _, err := w.Do(context.Background(), subject.Request{}); !errors.As(err, &we) {
		t.Errorf("the worker did not survive an exception: %v", err)
	}

	// "unsupported" at setup is a skip, with the worker's reason.
	_, err = open(t, "noop", subject.Params{"misbehave": "skip"}, nil)
	if !errors.As(err, &we) || we.SkipReason() != "noop told to skip" {
		t.Errorf("open with an unsupported setup: %v, want a skip", err)
	}
	// Bad params are not a skip.
	_, err = open(t, "noop", subject.Params{"misbehave": "sideways"}, nil)
	if !errors.As(err, &we) || we.Code != "bad_params" || we.SkipReason() != "" {
		t.Errorf("open with bad params: %v", err)
	}
}

func TestNotAWorker(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	tests := []struct {
		name    string
		command []string
		want    string
	}{
		// a program that prints something else entirely
		{"chatty", []string{"sh", "-c", "echo hello there; echo oops >&2; sleep 30"}, `not a protocol reply: "hello there"`},
		// a program that exits at once
		{"exits", []string{"sh", "-c", "echo cannot start >&2; exit 2"}, "exit status 2"}, // during or before hello, by timing
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenConfig(context.Background(), Config{Command: tc.command, Timeouts: Timeouts{Start: 10 * time.Second}}, subject.Spec{}, nil)
			var pe *ProcessError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a ProcessError containing %q", err, tc.want)
			}
		})
	}
	_, err := OpenConfig(context.Background(), Config{Adapter: "noop", Python: "/nonexistent/python3"}, subject.Spec{}, nil)
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/python3") {
		t.Errorf("missing interpreter: err = %v", err)
	}
}

func TestTorchVision(t *testing.T) {
	needModule(t, "torchvision")
	w := mustOpen(t, "torch_vision", subject.Params{"model": "resnet18", "image_size": 32, "batch_size": 2, "device": "cpu", "threads": 1}, nil)
	if d := w.Describe(); d["framework"] != "pytorch" || d["device"] != "cpu" {
		t.Errorf("Describe() = %v", d)
	}
	obs, err := w.DoBatch(context.Background(), subject.Request{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range obs {
		if o.Items != 2 || o.Values["latency_ms"] <= 0 {
			t.Errorf("observation: items %d, latency %v", o.Items, o.Values["latency_ms"])
		}
	}
	if sv := w.SetupValues(); sv["load_time_ms"] <= 0 || sv["first_call_ms"] <= 0 {
		t.Errorf("SetupValues() = %v", sv)
	}
}

func TestTorchLLM(t *testing.T) {
	needModule(t, "torch")
	w := mustOpen(t, "torch_llm", subject.Params{"backend": "torch", "prompt_tokens": 8, "max_new_tokens": 6, "device": "cpu", "threads": 1}, nil)
	obs, err := w.DoBatch(context.Background(), subject.Request{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range obs {
		if len(o.Tokens) != 6 || o.OutputTokens != 6 || o.InputTokens != 8 {
			t.Fatalf("tokens %d, output %d, input %d; want 6, 6, 8", len(o.Tokens), o.OutputTokens, o.InputTokens)
		}
		if !o.FirstToken.Equal(o.Tokens[0].At) || o.FirstToken.Before(o.Start) {
			t.Errorf("first token %v, first event %v, start %v", o.FirstToken, o.Tokens[0].At, o.Start)
		}
		if want := o.Start.Add(msDuration(o.Values["latency_ms"])); !o.Tokens[5].At.Equal(want) {
			t.Errorf("last token at %v, want the end of the in-worker time %v", o.Tokens[5].At, want)
		}
	}
}

func TestTorchSkips(t *testing.T) {
	needModule(t, "torch")
	// kernelized needs transformers and kernels; compiled needs torch >= 2 (skip reasons either way)
	_, err := open(t, "torch_llm", subject.Params{"backend": "torch", "variant": "kernelized"}, nil)
	var we *Error
	if !errors.As(err, &we) || !strings.Contains(we.SkipReason(), "kernelized") {
		t.Errorf("kernelized: err = %v, want a skip naming the variant", err)
	}
}

func TestObservations(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	t0 := time.Unix(1000, 0)
	rr := &runReply{
		LatencyMS:    []float64{10, 20},
		Items:        column{one: f(8)},
		TTFTMS:       column{list: []*float64{f(2), nil}},
		TokenMS:      [][]float64{{2, 6, 10}},
		TokenCount:   column{one: f(8)},
		OutputTokens: column{list: []*float64{f(24), f(0)}},
		IterValues:   map[string][]*float64{"x": {nil, f(7)}},
		Values:       map[string]float64{"memory_mb": 100},
		CPUMS:        column{list: []*float64{f(9), nil}}, // the worker's CPU time: the first only
	}
	// A round trip of 40ms: 30ms in the worker, 5ms overhead per iteration.
	obs := observations(rr, 2, t0, t0.Add(40*time.Millisecond))
	ms := func(d float64) time.Time { return t0.Add(msDuration(d)) }
	want := []subject.Observation{{
		Start: t0, End: ms(15), FirstToken: ms(2), Items: 8, OutputTokens: 24,
		Tokens: []subject.TokenEvent{{At: ms(2), Tokens: 8}, {At: ms(6), Tokens: 8}, {At: ms(10), Tokens: 8}},
		Values: map[string]float64{"latency_ms": 10, "memory_mb": 100, "cpu_ms": 9},
	}, {
		Start: ms(15), End: ms(40), Items: 8,
		Values: map[string]float64{"latency_ms": 20, "memory_mb": 100, "x": 7},
	}}
	if diff := cmp.Diff(want, obs); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // error substring; "" for valid
	}{
		{"adapter", Config{Adapter: "torch_vision"}, ""},
		{"no adapter", Config{}, `missing "adapter"`},                      // nothing to run
		{"unknown adapter", Config{Adapter: "tf"}, `unknown adapter "tf"`}, // typo or other framework
		{"own module", Config{Adapter: "mine", Module: "my_worker"}, ""},   // custom Python worker
		{"any language", Config{Command: []string{"./worker"}}, ""},        // no adapter needed
		{"both", Config{Adapter: "x", Module: "m", Script: "s.py"}, "not both"},
		{"family", Config{Adapter: "vision"}, ""}, // resolved by framework
		{"negative", Config{Adapter: "noop", Timeouts: Timeouts{Setup: -1}}, "negative"},
	}
	for _, tc := range tests {
		err := tc.cfg.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Validate() = %v, want %q", tc.name, err, tc.want)
		}
	}
	got := Requires(&Config{Adapter: "torch_vision"}, nil)
	if diff := cmp.Diff([]string{"python-module:torch", "python-module:torchvision"}, got); diff != "" {
		t.Errorf("Requires (-want +got):\n%s", diff)
	}
	got = Requires(&Config{Adapter: "vision"}, subject.Params{"framework": "jax"})
	if diff := cmp.Diff([]string{"python-module:jax", "python-module:flax"}, got); diff != "" {
		t.Errorf("Requires for vision/jax (-want +got):\n%s", diff)
	}
	if _, err := OpenConfig(context.Background(), Config{Adapter: "llm"}, subject.Spec{Params: subject.Params{"framework": "jax"}}, nil); err == nil || !strings.Contains(err.Error(), `framework "jax" has none`) {
		t.Errorf("llm with framework jax: err = %v", err)
	}
	if got := Requires(&Config{Adapter: "torch_vision", Command: []string{"x"}}, nil); got != nil {
		t.Errorf("Requires for a command worker = %v, want none", got)
	}
}

// BenchmarkRoundTrip measures the harness's cost per iteration of the noop adapter: the round
// trip minus the in-worker time, at batches of 1 and 100 iterations.
func BenchmarkRoundTrip(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run("batch="+strconv.Itoa(n), func(b *testing.B) {
			w := mustOpen(b, "noop", nil, nil)
			var over, inside float64
			iters := 0
			b.ResetTimer()
			for iters < b.N {
				obs, err := w.DoBatch(context.Background(), subject.Request{}, n)
				if err != nil {
					b.Fatal(err)
				}
				for _, o := range obs {
					lat := o.Values["latency_ms"]
					inside += lat
					over += float64(o.End.Sub(o.Start))/1e6 - lat
				}
				iters += n
			}
			b.ReportMetric(over/float64(iters)*1e3, "overhead-µs/iter")
			b.ReportMetric(inside/float64(iters)*1e3, "inworker-µs/iter")
		})
	}
}

// TestWorkerProfile: the profile op runs calls under cProfile (adapters other than torch's) and
// returns the .prof it wrote, apart from the measured runs.
func TestWorkerProfile(t *testing.T) {
	w := mustOpen(t, "noop", subject.Params{}, nil)
	dir := t.TempDir()
	files, err := w.Profile(context.Background(), dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 10 || files[0] != filepath.Join(dir, "python.prof") || files[9] != filepath.Join(dir, "memory_top.txt") {
		t.Fatalf("files %v, want %s/python.prof, python-1.json ... python-8.json and memory_top.txt", files, dir)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Size() == 0 {
		t.Errorf("%s: %v", files[0], err)
	}
	// explain reads the chunks: eight, each with its calls, the adapter's call among the entries.
	var rel []string
	for _, f := range files {
		rel = append(rel, filepath.Base(f))
	}
	p, err := explain.Load(dir, rel)
	if err != nil {
		t.Fatal(err)
	}
	if p.Source != explain.SourcePython || len(p.Chunks) != 8 || p.Chunks[0].Calls < 1 {
		t.Errorf("explain read %s with %d chunks (first of %v calls), want python, 8", p.Source, len(p.Chunks), p.Chunks[0].Calls)
	}
}

// TestWorkerTorchProfile: for a torch adapter the profile op writes torch.profiler's Chrome
// trace (Perfetto opens it), with the model's operators in it, and the worker keeps measuring.
func TestWorkerTorchProfile(t *testing.T) {
	needModule(t, "torch")
	w := mustOpen(t, "torch_llm", subject.Params{"backend": "torch", "vocab_size": 64, "hidden_size": 32,
		"num_layers": 1, "num_heads": 2, "prompt_tokens": 4, "max_new_tokens": 3, "device": "cpu", "threads": 1}, nil)
	dir := t.TempDir()
	files, err := w.Profile(context.Background(), dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 || files[0] != filepath.Join(dir, "torch_trace.json") || files[len(files)-1] != filepath.Join(dir, "memory_top.txt") {
		t.Fatalf("files %v, want %s/torch_trace.json, then memory_top.txt", files, dir)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var trace struct {
		TraceEvents []struct {
			Name string `json:"name"`
			Ph   string `json:"ph"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &trace); err != nil {
		t.Fatalf("%s is not a Chrome trace: %v", files[0], err)
	}
	ops := 0
	for _, e := range trace.TraceEvents {
		if strings.HasPrefix(e.Name, "aten::") && e.Ph == "X" {
			ops++
		}
	}
	if ops == 0 {
		t.Errorf("the trace has no aten:: operator events (%d events)", len(trace.TraceEvents))
	}
	obs, err := w.DoBatch(context.Background(), subject.Request{}, 2)
	if err != nil || len(obs) != 2 {
		t.Errorf("after profiling: %d observations, %v", len(obs), err)
	}
}
