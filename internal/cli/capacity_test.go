package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/capacity"
	"github.com/inferbench/inferbench/internal/mockserver"
	"github.com/inferbench/inferbench/internal/testkit/llamatest"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/result"
)

// TestCapacityCommand runs `inferbench capacity` against a mockserver with a capacity model: a
// short search (few requests a step, four steps) whose figures reach run.json, the history store
// and report.html. The search's statistics are tested against the model's known capacity in
// package capacity and by make capacity-coverage; here, that the command carries them.
func TestCapacityCommand(t *testing.T) {
	// A server slow enough (capacity between 50 and 60 req/s) for a limit at which the client's
	// own delays on a busy machine (a schedule lag p99 of 6 to 12 ms under -race with two busy
	// loops on 2 cores) stay below capacity.ClientShare of it (25 ms of 250): a limit of 60 ms,
	// with a server four times as fast, had the search stop as client-bound there, rightly, in 5
	// of 15 runs.
	model := mockserver.Capacity{Slots: 4, PrefillMs: 8, TokenMs: 4, BatchSlowdown: 0.1}
	url := startMock(t, mockserver.Config{Capacity: model, OutputTokens: workload.Fixed(8)})
	dir := t.TempDir()
	code, out, errOut := runCLI(t, dir, nil, "capacity", "--openai", url, "--model", "mock", "--output-tokens", "8",
		"--slo", "ttft_ms.p90=250", "--start-rate", "40", "--min-requests", "40", "--max-requests", "80",
		"--warmup-requests", "10", "--max-steps", "4", "--format", "json", "--store", filepath.Join(dir, "h.db"))
	if code != ExitOK {
		logs, _ := filepath.Glob(filepath.Join(dir, "benchmark_results", "*", "run.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			errOut += "\n" + l + ":\n" + string(b)
		}
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	r := decodeRun(t, out)
	if len(r.Scenarios) != 1 {
		t.Fatalf("%d scenarios", len(r.Scenarios))
	}
	sc := r.Scenarios[0]
	got := map[string]float64{}
	for _, m := range []string{"capacity_rps", "capacity_lower_rps", "capacity_steps"} {
		v, ok := sc.Metrics[m].Center()
		if !ok || sc.Metrics[m].Better == "" {
			t.Fatalf("no %s in %v", m, sc.Metrics)
		}
		got[m] = v
	}
	if got["capacity_steps"] < 1 || got["capacity_steps"] > 4 || got["capacity_rps"] <= 0 || got["capacity_lower_rps"] > got["capacity_rps"] {
		t.Errorf("capacity figures %v", got)
	}
	var res capacity.Result
	if err := json.Unmarshal(sc.Extra.Other["capacity"], &res); err != nil {
		t.Fatalf("extra.capacity: %v", err)
	}
	judged := 0 // the curve leaves out the steps the client bound (run again)
	for _, st := range res.Steps {
		if st.ClientBound == "" {
			judged++
		}
	}
	if len(res.Steps) != int(got["capacity_steps"]) || len(res.Curve) != 1 || len(res.Curve[0]) != judged {
		t.Errorf("extra.capacity: %d steps, curve %v", len(res.Steps), res.Curve)
	}
	if res.Steps[0].Rate != 40 || res.Objectives[0].Name != "ttft_ms.p90" || res.Objectives[0].Target != 0.9 {
		t.Errorf("first step %+v, objectives %+v", res.Steps[0], res.Objectives)
	}
	// Each step is a row of the sweep table, as a sweep's steps are; none sent more than its
	// warm-up and its most measured requests.
	if len(sc.Extra.Sweep) != len(res.Steps) {
		t.Errorf("sweep table %d rows for %d steps", len(sc.Extra.Sweep), len(res.Steps))
	}
	for _, row := range sc.Extra.Sweep {
		if !strings.HasPrefix(row.Name, "capacity=") || row.Requests > 80 {
			t.Errorf("sweep row %+v", row)
		}
	}
	html, err := os.ReadFile(filepath.Join(dir, "benchmark_results", "latest", "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "attainment") {
		t.Error("report.html has no attainment chart")
	}
	// The history keeps the capacity like any metric.
	code, out, errOut = runCLI(t, dir, nil, "history", "openai", "--metric", "capacity_rps", "--store", filepath.Join(dir, "h.db"), "--format", "json")
	if code != ExitOK || !strings.Contains(out, "capacity_rps") {
		t.Errorf("history capacity_rps: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestCapacityTableLine: on a terminal's table the answer follows the summary, and says what
// run.json holds. The step is a pass on a quiet machine (50 req/s, bound 50); on a busy one its
// time to first token may rise through the step, which leaves it not yet known: reading above
// the target, a capacity with a bound of 0; below it, no capacity at all (no step held), which
// the line says.
func TestCapacityTableLine(t *testing.T) {
	url := startMock(t, mockserver.Config{Capacity: mockserver.Capacity{Slots: 4, TokenMs: 1}, OutputTokens: workload.Fixed(4)})
	dir := t.TempDir()
	code, out, errOut := runCLI(t, dir, nil, "capacity", "--openai", url, "--model", "mock", "--output-tokens", "4",
		"--slo", "ttft_ms.p90=1000", "--start-rate", "50", "--min-requests", "40", "--max-requests", "40", "--max-steps", "1", "--no-store")
	if code != ExitOK {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "benchmark_results", "latest", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	sc := decodeRun(t, string(b)).Scenarios[0]
	c, stored := sc.Metrics["capacity_rps"].Center()
	lo, _ := sc.Metrics["capacity_lower_rps"].Center()
	n, _ := sc.Metrics["capacity_steps"].Center()
	if stored && (c != 50 || lo != 50) && (c <= 0 || lo != 0) || n != 1 {
		t.Errorf("run.json: capacity %v, bound %v, %v steps; want 50 and 50 (or a bound of 0 when the step is not yet known) in 1", c, lo, n)
	}
	want := fmt.Sprintf("capacity openai/default: %v req/s (95%% lower bound %v req/s) in 1 steps\n", c, lo)
	if !stored {
		want = "capacity openai/default: none: no step passed in 1 steps; run.json keeps the steps\n"
	}
	if !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
}

// TestCapacityNeedsPercentiles: a mean SLO has no share of requests to judge.
func TestCapacityNeedsPercentiles(t *testing.T) {
	code, _, errOut := runCLI(t, t.TempDir(), nil, "capacity", "--openai", "http://127.0.0.1:9/v1", "--model", "m", "--slo", "ttft_ms.mean=30")
	if code != ExitUsage || !strings.Contains(errOut, "not a percentile") {
		t.Errorf("exit %d, stderr %s", code, errOut)
	}
}

// TestOutputShortRate: a server that stops early (the mockserver's short_rate) shows in
// output_short_rate, with a warning, where it refuses the fields that ask for exact lengths
// (refuse_exact: a server /v1/models does not name, whose answer to the subject's one-token
// request with them is HTTP 400; the run's go without, noted in the environment); a server known
// to take them (the mockserver's owned_by) is asked for, and gives, every token by default.
func TestOutputShortRate(t *testing.T) {
	taking := startMock(t, mockserver.Config{ShortRate: 0.3, Seed: 2})
	refusing := startMock(t, mockserver.Config{ShortRate: 0.3, Seed: 2, RefuseExact: true})
	for _, tc := range []struct {
		url   string
		flags []string
		want  func(float64) bool
		warn  bool
		note  string // in the environment's exact_output
	}{
		{refusing, nil, func(r float64) bool { return r > 0.15 && r < 0.45 }, true, "refused ignore_eos and min_tokens (HTTP 400"},
		{taking, nil, func(r float64) bool { return r == 0 }, false, `owned_by "inferbench"`},
		{refusing, []string{"--ignore-eos"}, nil, false, ""},
	} {
		args := append([]string{"run", "--openai", tc.url, "--model", "mock", "--concurrency", "4", "--requests", "60", "--output-tokens", "16",
			"--format", "json", "--no-store"}, tc.flags...)
		code, out, errOut := runCLI(t, t.TempDir(), nil, args...)
		if tc.want == nil {
			// --ignore-eos asks for them whatever the server says: every request refused
			if code == ExitOK && !strings.Contains(out, "HTTP 400") {
				t.Errorf("%v against a server refusing them: exit %d, want the requests' HTTP 400 reported\n%s", tc.flags, code, out)
			}
			continue
		}
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s", tc.flags, code, errOut)
		}
		sc := decodeRun(t, out).Scenarios[0]
		r, ok := sc.Metrics["output_short_rate"].Center()
		if !ok || !tc.want(r) {
			t.Errorf("%v: output_short_rate %v (%v)", tc.flags, r, ok)
		}
		if _, ok := sc.Metrics["output_short"]; ok {
			t.Errorf("%v: the per-request output_short reached the metrics", tc.flags)
		}
		warned := strings.Contains(strings.Join(sc.Warnings, "\n"), "stopped before the output tokens")
		if warned != tc.warn {
			t.Errorf("%v: warnings %q, want the short warning %v", tc.flags, sc.Warnings, tc.warn)
		}
		if note := fmt.Sprint(sc.Environment["exact_output"]); !strings.Contains(note, tc.note) {
			t.Errorf("%v: exact_output %q, want it to say %q", tc.flags, note, tc.note)
		}
	}
}

// TestLlamaCppCapacity searches llama.cpp's own server (two slots, a tiny random-weight model)
// for its capacity under a loose end-to-end SLO: a short search, three steps of 20 requests at
// low rates, that ends with a capacity and its curve of attainment against rate. The SLO is on
// the median: 20 requests all within a p90 SLO leave the attainment's lower bound at 0.91, not
// above 0.9, so every step stayed unknown and the capacity 0 (as it did against llama.cpp here). It needs
// llama-server (make llama-server; INFERBENCH_REQUIRE=llama-server makes its absence a failure).
func TestLlamaCppCapacity(t *testing.T) {
	srv := llamatest.Start(t, 2)
	code, out, errOut := runCLI(t, t.TempDir(), nil, "capacity", "--openai", srv.URL, "--model", srv.Model,
		"--input-tokens", "24", "--output-tokens", "12", "--ignore-eos", "--slo", "e2e_ms.p50=5000",
		"--start-rate", "4", "--min-requests", "20", "--max-requests", "20", "--warmup-requests", "2", "--max-steps", "3",
		"--format", "json", "--no-store", "--seed", "5")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s\nserver log:\n%s", code, errOut, srv.Log)
	}
	sc := decodeRun(t, out).Scenarios[0]
	var res capacity.Result
	if err := json.Unmarshal(sc.Extra.Other["capacity"], &res); err != nil {
		t.Fatalf("extra.capacity: %v", err)
	}
	if len(res.Steps) == 0 || len(res.Steps) > 3 || len(res.Curve) != 1 || len(res.Curve[0]) != len(res.Steps) {
		t.Fatalf("steps %+v, curve %v", res.Steps, res.Curve)
	}
	c, ok := sc.Metrics["capacity_rps"].Center()
	t.Logf("steps %+v", res.Steps)
	if !ok || c <= 0 || c < res.LowerRPS {
		t.Errorf("capacity %v (lower bound %v)", c, res.LowerRPS)
	}
	for _, st := range res.Steps {
		if st.Requests != 20 || st.Estimates[0].Attainment < 0 || st.Estimates[0].Attainment > 1 {
			t.Errorf("step %+v", st)
		}
	}
}

// TestCapacityFromDefinition: `inferbench capacity PATH` runs a definition's serving scenario in
// mode capacity with the definition's SLOs and capacity settings (its start rate here), where no
// flag replaces them.
func TestCapacityFromDefinition(t *testing.T) {
	url := startMock(t, mockserver.Config{Capacity: mockserver.Capacity{Slots: 4, TokenMs: 1}, OutputTokens: workload.Fixed(4)})
	dir := t.TempDir()
	def := "name: cap\nsubject:\n  kind: openai\n  url: " + url + "\n  model: mock\n  metrics_url: none\n  workload: {output_tokens: 4}\n" +
		"load:\n  mode: concurrency\n  slo: {ttft_ms.p90: 1000}\n  capacity: {start: 30, min_requests: 40, max_requests: 40, max_steps: 1}\n"
	if err := os.MkdirAll(filepath.Join(dir, "benches"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "benches", "cap.yaml"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, dir, nil, "capacity", ".", "--format", "json", "--no-store")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	sc := decodeRun(t, out).Scenarios[0]
	var res capacity.Result
	if err := json.Unmarshal(sc.Extra.Other["capacity"], &res); err != nil || len(res.Steps) != 1 || res.Steps[0].Rate != 30 {
		t.Errorf("extra.capacity %+v (%v): want one step at the definition's 30 req/s", res, err)
	}
}

// TestPrintCapacityClientLimited: a search the client limited prints its answer, "at least" the
// bound it judged, with the client's limit; before, such a search printed "none".
func TestPrintCapacityClientLimited(t *testing.T) {
	v := func(x float64) result.Metric { return result.Metric{Unit: "1/s", Better: "higher", Value: &x} }
	r := &result.Run{Scenarios: []result.Scenario{
		{Benchmark: "serve", Scenario: "a", Metrics: map[string]result.Metric{"capacity_lower_rps": v(44.1), "capacity_client_limit_rps": v(45.7), "capacity_steps": v(9)}},
		{Benchmark: "serve", Scenario: "b", Metrics: map[string]result.Metric{"capacity_rps": v(51), "capacity_lower_rps": v(49), "capacity_steps": v(7)}},
		{Benchmark: "serve", Scenario: "c", Metrics: map[string]result.Metric{"capacity_steps": v(4)}},
	}}
	var b strings.Builder
	printCapacity(&b, r)
	for _, want := range []string{
		"capacity serve/a: at least 44.1 req/s (the client limited the search at 45.7 req/s",
		"capacity serve/b: 51 req/s (95% lower bound 49 req/s) in 7 steps",
		"capacity serve/c: none: no step passed in 4 steps",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("printed\n%s\nwant %q", b.String(), want)
		}
	}
}
