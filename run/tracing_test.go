package run_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/inferbench/inferbench/internal/kind/gofunc"
	"github.com/inferbench/inferbench/internal/testkit/otlptest"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/suite"
)

// countingObserver is an observer like the progress bar: it counts the scenarios it is told are
// done, and the end of the scenarios.
type countingObserver struct {
	mu             sync.Mutex
	done, finished int
}

func (l *countingObserver) ScenarioFinished(*result.Scenario) {
	l.mu.Lock()
	l.done++
	l.mu.Unlock()
}
func (l *countingObserver) ScenariosFinished() { l.finished++ }

var registerTraced sync.Once

// tracedOptions are the options of a run of one gofunc benchmark (2 warm-up and 5 measured
// iterations) with nothing but the run folder written.
func tracedOptions(t *testing.T) run.Options {
	t.Helper()
	registerTraced.Do(func() {
		gofunc.Register("tracing-test/noop", func(context.Context) error { return nil })
	})
	dir := t.TempDir()
	warmup, iterations := 2, 5
	bench := &suite.Benchmark{
		Name: "traced", Kind: "gofunc", Config: &gofunc.Config{Func: "tracing-test/noop"},
		File: "tracing_test.go", Dir: dir,
		Load: load.Config{WarmupIterations: &warmup, MeasurementIterations: &iterations},
	}
	return run.Options{
		Selection: run.Selection{Benchmarks: []*suite.Benchmark{bench}},
		Monitor:   run.Monitor{Off: true}, NoStore: true, NoHTMLReport: true, Format: "none",
		OutputDir: filepath.Join(dir, "results"), Dir: dir,
		Env: []string{"HOME=" + dir}, // no OTEL_* variables
	}
}

// TestRunExportsTrace: run.Run with Options.Tracing sends the run, its scenario and the
// scenario's iterations as spans to an OTLP receiver, with the progress observer still told of
// every scenario; a negative SpanRate leaves out the iterations, and no endpoint exports nothing.
// Failed before: the trace was started only by the command line (cli/tracing.go), so a Go program
// calling run.Run got no span.
func TestRunExportsTrace(t *testing.T) {
	for _, tc := range []struct {
		name       string
		tracing    func(url string) run.Tracing
		iterations int // iteration spans wanted
		want       bool
	}{
		// A bare endpoint gets /v1/traces; the default span rate records every iteration.
		{"endpoint", func(url string) run.Tracing { return run.Tracing{Endpoint: url} }, 7, true},
		// A negative rate: the run and scenario spans only.
		{"no call spans", func(url string) run.Tracing { return run.Tracing{Endpoint: url + "/v1/traces", SpanRate: -1} }, 0, true},
		// Neither an endpoint nor the environment: no trace.
		{"off", func(string) run.Tracing { return run.Tracing{} }, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, url := otlptest.Start(t)
			opts := tracedOptions(t)
			opts.Tracing = tc.tracing(url)
			prog := &countingObserver{}
			opts.Observers = []run.Observer{prog}
			var stderr strings.Builder
			opts.Stderr = &stderr
			r, err := run.Run(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if prog.done != 1 || prog.finished != 1 {
				t.Errorf("progress observer told of %d scenarios and %d finishes, want 1 and 1", prog.done, prog.finished)
			}
			if strings.Contains(stderr.String(), "otlp") {
				t.Errorf("stderr: %s", stderr.String())
			}
			spans := rc.Spans()
			if !tc.want {
				if len(spans) != 0 {
					t.Errorf("received %d spans, want none", len(spans))
				}
				return
			}
			for _, req := range rc.Requests() {
				if req != "POST /v1/traces" {
					t.Errorf("spans sent as %s, want POST /v1/traces", req)
				}
			}
			byName := map[string][]*tracepb.Span{}
			for _, s := range spans {
				byName[s.Name] = append(byName[s.Name], s)
			}
			runs, scens := byName["inferbench run"], byName["scenario traced/default"]
			if len(runs) != 1 || len(scens) != 1 {
				t.Fatalf("received %d run spans and %d scenario spans, want 1 and 1", len(runs), len(scens))
			}
			got := map[string]any{}
			for _, kv := range runs[0].Attributes {
				switch kv.Key {
				case "inferbench.run_id":
					got[kv.Key] = kv.Value.GetStringValue()
				case "inferbench.scenarios", "inferbench.failed":
					got[kv.Key] = kv.Value.GetIntValue()
				}
			}
			want := map[string]any{"inferbench.run_id": r.ID, "inferbench.scenarios": int64(1), "inferbench.failed": int64(0)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("run span attributes (-want +got):\n%s", diff)
			}
			if string(scens[0].ParentSpanId) != string(runs[0].SpanId) {
				t.Error("the scenario span is not the run span's child")
			}
			its := byName["iteration"]
			if diff := cmp.Diff(tc.iterations, len(its)); diff != "" {
				t.Errorf("iteration spans (-want +got):\n%s", diff)
			}
			for _, s := range its {
				if string(s.ParentSpanId) != string(scens[0].SpanId) {
					t.Error("an iteration span is not the scenario span's child")
					break
				}
			}
		})
	}
}

// TestRunTraceUsageErrors: tracing settings the run cannot honour are usage errors naming the
// variable or flag, before anything runs; the sampler is read from Options.Env.
func TestRunTraceUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		env     []string
		rate    float64
		wantMsg string
	}{
		{[]string{"OTEL_TRACES_SAMPLER=jaeger_remote"}, 0, "OTEL_TRACES_SAMPLER"},                                   // not supported
		{[]string{"OTEL_TRACES_SAMPLER=traceidratio", "OTEL_TRACES_SAMPLER_ARG=1.5"}, 0, "OTEL_TRACES_SAMPLER_ARG"}, // out of range
		{nil, math.NaN(), "--otlp-span-rate"},                                                                       // not a number
	} {
		opts := tracedOptions(t)
		opts.Env = append(opts.Env, tc.env...)
		opts.Tracing = run.Tracing{Endpoint: "http://127.0.0.1:1/v1/traces", SpanRate: tc.rate}
		r, err := run.Run(context.Background(), opts)
		if !errors.Is(err, run.ErrUsage) || !strings.Contains(err.Error(), tc.wantMsg) || r != nil {
			t.Errorf("%v rate %v: ran %v, error %v; want a usage error naming %s and no run", tc.env, tc.rate, r != nil, err, tc.wantMsg)
		}
	}
}
