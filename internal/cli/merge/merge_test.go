package merge

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/inferbench/inferbench/internal/stage/scaleout"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// single returns a run of n scenarios with deterministic samples, as one machine would record.
func single(n int) *result.Run {
	r := &result.Run{Schema: result.Schema, ID: "single", StartedAt: t0, FinishedAt: t0.Add(time.Hour),
		Environment: map[string]any{"hostname": "one"}}
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	for i := range n {
		xs := make([]float64, 50)
		for k := range xs {
			xs[k] = 10 + rng.ExpFloat64()
		}
		s, _ := stats.Summarize(xs)
		m := result.NewMetric("latency_ms")
		m.Summary, m.Samples = &s, xs
		status := result.StatusOK
		if i%17 == 3 {
			status = result.StatusFailed
		}
		r.Scenarios = append(r.Scenarios, result.Scenario{
			Benchmark: fmt.Sprintf("model-%d", i%7), Scenario: fmt.Sprintf("batch_size=%d", i), Subject: "mock",
			Status: status, StartedAt: t0.Add(time.Duration(i) * time.Second), DurationS: 1 + float64(i%5),
			Iterations: result.Iterations{Measured: 50}, Metrics: map[string]result.Metric{"latency_ms": m},
		})
	}
	r.Tally()
	return r
}

// split does what `inferbench run --shard i/n` does to the same selection: each shard runs its
// part and records its shard; the runs pass through JSON as files or the store would.
func split(t *testing.T, whole *result.Run, n int, group string) []*result.Run {
	t.Helper()
	items := make([]scaleout.Item, len(whole.Scenarios))
	for i, sc := range whole.Scenarios {
		items[i] = scaleout.Item{ID: sc.ID()}
	}
	var runs []*result.Run
	for i := range n {
		mine, plan, err := scaleout.Select(items, scaleout.Spec{Index: i, Count: n})
		if err != nil {
			t.Fatal(err)
		}
		r := &result.Run{Schema: result.Schema, ID: fmt.Sprintf("run-%d", i), StartedAt: t0.Add(time.Duration(i) * time.Minute),
			FinishedAt: t0.Add(time.Hour), Environment: map[string]any{"hostname": fmt.Sprintf("node-%d", i)},
			Shard: &result.ShardInfo{Group: group, Index: i, Count: n, Planned: len(items), Assigned: len(mine), Balance: plan.Balance, Plan: plan.Digest}}
		for _, k := range mine {
			r.Scenarios = append(r.Scenarios, whole.Scenarios[k])
		}
		r.Tally()
		runs = append(runs, roundTrip(t, r))
	}
	// The merge must not depend on the order runs are found in.
	rand.New(rand.NewPCG(9, 9)).Shuffle(len(runs), func(i, j int) { runs[i], runs[j] = runs[j], runs[i] })
	return runs
}

func roundTrip(t *testing.T, r *result.Run) *result.Run {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back result.Run
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

// TestShardsEqualSingleRun is the merge bar: the merge of the shards has the same scenario set
// and the same samples as one run of the same scenarios, and names every shard's environment.
func TestShardsEqualSingleRun(t *testing.T) {
	whole := roundTrip(t, single(100))
	for _, n := range []int{1, 2, 7, 64} {
		m, err := Runs(split(t, whole, n, "g1"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		byID := func(a, b result.Scenario) bool { return a.ID() < b.ID() }
		if diff := cmp.Diff(whole.Scenarios, m.Scenarios, cmpopts.SortSlices(byID)); diff != "" {
			t.Fatalf("n=%d: merged scenarios differ from the single run (-single +merged):\n%s", n, diff)
		}
		if m.Summary != whole.Summary {
			t.Errorf("n=%d: summary %+v, want %+v", n, m.Summary, whole.Summary)
		}
		if len(m.Merged.Parts) != n || m.Merged.Kind != KindShards || len(m.Merged.Missing) != 0 {
			t.Fatalf("n=%d: merge info %+v", n, m.Merged)
		}
		for i, p := range m.Merged.Parts {
			if p.Index != i || p.Environment["hostname"] != fmt.Sprintf("node-%d", i) {
				t.Errorf("n=%d: part %d = %+v", n, i, p)
			}
		}
		if failed, why := Failed(m); failed {
			t.Errorf("n=%d: complete merge fails the gate: %s", n, why)
		}
	}
}

func TestMissingAndRetriedShards(t *testing.T) {
	whole := single(40)
	runs := split(t, whole, 4, "g2")
	slices.SortFunc(runs, func(a, b *result.Run) int { return a.Shard.Index - b.Shard.Index })
	// Shard 1 ran twice: an interrupted pod and its complete retry. Shard 2 never reported.
	interrupted := roundTrip(t, runs[1])
	interrupted.ID, interrupted.Partial = "run-1-first", true
	interrupted.StartedAt = runs[1].StartedAt.Add(time.Hour) // even though it started later
	parts := []*result.Run{runs[0], interrupted, runs[1], runs[3]}
	m, err := Runs(parts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Merged.Superseded, []string{"run-1-first"}) {
		t.Errorf("superseded %v", m.Merged.Superseded)
	}
	if want := []string{"shard 2/4: no run"}; !slices.Equal(m.Merged.Missing, want) {
		t.Errorf("missing %q, want %q", m.Merged.Missing, want)
	}
	failed, why := Failed(m)
	if !failed || !strings.Contains(why, "shard 2/4") {
		t.Errorf("gate: %v %q", failed, why)
	}
	m2, _ := Runs(parts, Options{AllowMissing: true})
	if failed, _ := Failed(m2); failed || len(m2.Merged.Missing) != 1 {
		t.Errorf("allowed missing still fails, or is no longer named: %+v", m2.Merged)
	}
	// Only the interrupted run of shard 1: named as unfinished, and the run is partial.
	m3, _ := Runs([]*result.Run{runs[0], interrupted, runs[2], runs[3]}, Options{})
	if len(m3.Merged.Missing) != 1 || !strings.Contains(m3.Merged.Missing[0], "did not finish") || m3.Partial || m3.Merged.Parts[1].Status != "partial" {
		t.Errorf("interrupted shard: %+v partial=%v", m3.Merged, m3.Partial)
	}
}

func TestInconsistentGroups(t *testing.T) {
	whole := single(20)
	a := split(t, whole, 3, "g")
	b := split(t, single(21), 3, "g") // another selection: another plan
	for name, c := range map[string]struct {
		runs []*result.Run
		want string
	}{
		"different plans":  {[]*result.Run{a[0], b[1]}, "planned different assignments"},
		"different groups": {[]*result.Run{a[0], split(t, whole, 3, "other")[1]}, "of group"},
		"different counts": {[]*result.Run{a[0], split(t, whole, 4, "g")[0]}, "one of 4"},
		"not a shard":      {[]*result.Run{whole}, "neither a shard nor an agent"},
	} {
		if _, err := Runs(c.runs, Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
}

// agentRuns splits samples among k agents as a load split would: each agent records its own
// histograms, window and counts.
func agentRuns(t *testing.T, samples []float64, k int, rate float64) []*result.Run {
	t.Helper()
	var runs []*result.Run
	per := len(samples) / k
	for a := range k {
		xs := samples[a*per : (a+1)*per]
		if a == k-1 {
			xs = samples[a*per:]
		}
		h := stats.NewHistogram()
		for _, x := range xs {
			h.Add(x)
		}
		s, _ := h.Summary()
		m := result.NewMetric("e2e_ms")
		m.Summary, m.Samples = &s, xs
		start := t0.Add(time.Duration(a) * time.Millisecond) // 1 ms apart
		dur := time.Duration(float64(len(xs)) / (rate / float64(k)) * float64(time.Second))
		win := result.Window{Start: start, End: start.Add(dur), OK: len(xs), OutputTokens: 16 * len(xs)}
		rps := float64(len(xs)) / dur.Seconds()
		r := &result.Run{Schema: result.Schema, ID: fmt.Sprintf("agent-%d", a), StartedAt: start,
			Environment: map[string]any{"hostname": fmt.Sprintf("client-%d", a)},
			Agent:       &result.AgentInfo{Group: "load", Index: a, Count: k, StartAt: t0},
			Scenarios: []result.Scenario{{
				Benchmark: "openai", Scenario: "rate=100", Subject: "openai", Status: result.StatusOK,
				StartedAt: start, DurationS: dur.Seconds(), Iterations: result.Iterations{Measured: len(xs)},
				Metrics: map[string]result.Metric{"e2e_ms": m, "requests_per_s": {Unit: "1/s", Better: "higher", Value: &rps}},
				Extra:   result.Extra{Histograms: map[string]*stats.Histogram{"e2e_ms": h}, Window: &win},
			}},
		}
		r.Tally()
		runs = append(runs, roundTrip(t, r))
	}
	return runs
}

// TestAgentsMergeExactly: the merged histogram is the union's, bucket for bucket; the rate is
// the combined one; the skew names each agent.
func TestAgentsMergeExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	samples := make([]float64, 40000)
	union := stats.NewHistogram()
	for i := range samples {
		samples[i] = 50 * math.Exp(rng.NormFloat64()*0.6)
		union.Add(samples[i])
	}
	m, err := Runs(agentRuns(t, samples, 4, 200), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc := m.Scenarios[0]
	hs := sc.Extra.Histograms
	if hs == nil {
		t.Fatal("no merged histograms")
	}
	if diff := cmp.Diff(union.Buckets(), hs["e2e_ms"].Buckets()); diff != "" {
		t.Fatalf("merged histogram differs from the union's:\n%s", diff)
	}
	us, _ := union.Summary()
	got := sc.Metrics["e2e_ms"].Summary
	if got.N != len(samples) || got.P99 != us.P99 || got.Median != us.Median {
		t.Errorf("merged summary n=%d p99=%v p50=%v, want %d %v %v", got.N, got.P99, got.Median, len(samples), us.P99, us.Median)
	}
	if sc.Iterations.Measured != len(samples) {
		t.Errorf("measured %d", sc.Iterations.Measured)
	}
	// 40,000 requests at 200/s over 200 s plus 3 ms of spread.
	if rps := *sc.Metrics["requests_per_s"].Value; math.Abs(rps-200)/200 > 0.001 {
		t.Errorf("requests_per_s = %v, want 200", rps)
	}
	sk := sc.Extra.Agents
	if sk == nil || len(sk.Agents) != 4 {
		t.Fatalf("skew %+v", sk)
	}
	if math.Abs(sk.StartSpreadMS-3) > 1e-6 || *sk.Agents[3].StartLagMS != 3 {
		t.Errorf("start spread %v, agent 3 lag %v", sk.StartSpreadMS, *sk.Agents[3].StartLagMS)
	}
}

// TestKeepSamplesZero: KeepSamples 0 keeps the default 10,000 pooled samples and a negative one
// keeps all, as run's and the engine's option do. Before, merge's Options read 0 as 10,000 and
// its GroupOptions read 0 as all.
func TestKeepSamplesZero(t *testing.T) {
	samples := make([]float64, 12000)
	for i := range samples {
		samples[i] = float64(i%97 + 1)
	}
	for _, tc := range []struct {
		keep, want int
	}{{0, 10000}, {-1, 12000}, {500, 500}} {
		m, err := Runs(agentRuns(t, samples, 2, 200), Options{KeepSamples: tc.keep})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(m.Scenarios[0].Metrics["e2e_ms"].Samples); got != tc.want {
			t.Errorf("KeepSamples %d kept %d samples, want %d", tc.keep, got, tc.want)
		}
	}
}

// TestAgentValues: single values combine by what they measure, also when an agent lacks one.
func TestAgentValues(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	mk := func(i, measured, failed int, vals map[string]result.Metric) *result.Run {
		r := &result.Run{Schema: result.Schema, ID: fmt.Sprint("a", i), StartedAt: t0,
			Agent: &result.AgentInfo{Group: "v", Index: i, Count: 3},
			Scenarios: []result.Scenario{{Benchmark: "b", Scenario: "s", Status: result.StatusOK, StartedAt: t0, DurationS: 1,
				Iterations: result.Iterations{Measured: measured, Failed: failed}, Metrics: vals}}}
		r.Tally()
		return r
	}
	runs := []*result.Run{
		mk(0, 100, 10, map[string]result.Metric{"error_rate": {Unit: "ratio", Value: v(0.1)}, "ttft_coalesced_rate": {Unit: "ratio", Value: v(0.5)}, "memory_mb": {Unit: "MB", Value: v(10)}, "goodput_rps": {Unit: "1/s", Value: v(5)}}),
		mk(1, 300, 0, map[string]result.Metric{"error_rate": {Unit: "ratio", Value: v(0)}, "memory_mb": {Unit: "MB", Value: v(30)}, "goodput_rps": {Unit: "1/s", Value: v(7)}}),
		mk(2, 100, 0, map[string]result.Metric{"error_rate": {Unit: "ratio", Value: v(0)}, "ttft_coalesced_rate": {Unit: "ratio", Value: v(0.1)}, "memory_mb": {Unit: "MB", Value: v(20)}, "goodput_rps": {Unit: "1/s", Value: v(1)}}),
	}
	m, err := Runs(runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for k, mt := range m.Scenarios[0].Metrics {
		got[k] = *mt.Value
	}
	want := map[string]float64{
		"error_rate":          10.0 / 500,                // from the counts
		"ttft_coalesced_rate": (100*0.5 + 100*0.1) / 200, // weighted by the agents that reported it
		"memory_mb":           30,                        // the largest
		"goodput_rps":         13,                        // summed
	}
	for k, w := range want {
		if math.Abs(got[k]-w) > 1e-12 {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
}

// TestPartsNamed: the merged run's command line is not part 0's (its --agent 0 or --shard 0/n
// would describe one part as the whole); each part keeps its own, and each agent's warnings
// name the agents that gave them.
func TestPartsNamed(t *testing.T) {
	runs := agentRuns(t, []float64{1, 2, 3, 4, 5, 6}, 3, 100)
	for i, r := range runs {
		r.Config = result.Config{Args: []string{"run", "--agents", "3", "--agent", fmt.Sprint(i)}, Filters: map[string]string{"include": "openai/*"}}
		sc := &r.Scenarios[0]
		sc.Warnings = []string{"every agent says this"}
		if i != 1 {
			sc.Warnings = append(sc.Warnings, fmt.Sprintf("only agent %d says this", i))
		}
		if i == 2 {
			sc.Warnings = append(sc.Warnings, "agents 0 and 2 say this")
		}
		if i == 0 {
			sc.Warnings = append(sc.Warnings, "agents 0 and 2 say this")
		}
	}
	m, err := Runs(runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"merge", "--group", "load"}; !slices.Equal(m.Config.Args, want) {
		t.Errorf("merged run's command line %q, want %q", m.Config.Args, want)
	}
	if m.Config.Filters["include"] != "openai/*" {
		t.Errorf("merged run's selection %v, want the parts'", m.Config.Filters)
	}
	for i, p := range m.Merged.Parts {
		if want := fmt.Sprint(i); len(p.Args) != 5 || p.Args[4] != want {
			t.Errorf("part %d: args %q", i, p.Args)
		}
	}
	want := []string{
		"agents 0, 1, 2: every agent says this",
		"agent 0: only agent 0 says this",
		"agents 0, 2: agents 0 and 2 say this",
		"agent 2: only agent 2 says this",
	}
	got := m.Scenarios[0].Warnings
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Errorf("merged warnings:\n%q\nwant first:\n%q", got, want)
	}
}
