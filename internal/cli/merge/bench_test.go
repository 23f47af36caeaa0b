package merge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/stage/scaleout"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// shardFiles returns the run.json documents of n shards of a suite of n*per scenarios, each
// scenario with a latency distribution of 100 samples and a few single values.
func shardFiles(b testing.TB, n, per int) [][]byte {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 1))
	items := make([]scaleout.Item, n*per)
	for i := range items {
		items[i] = scaleout.Item{ID: fmt.Sprintf("model-%d/batch_size=%d,dtype=fp16", i/64, i%64)}
	}
	where, plan, err := scaleout.Assign(items, n)
	if err != nil {
		b.Fatal(err)
	}
	runs := make([]*result.Run, n)
	for i := range runs {
		runs[i] = &result.Run{Schema: result.Schema, ID: fmt.Sprint("run-", i), StartedAt: t0, FinishedAt: t0.Add(time.Hour),
			Environment: map[string]any{"hostname": fmt.Sprint("node-", i), "cpu": map[string]any{"model": "x", "cores": 64}},
			Shard:       &result.ShardInfo{Group: "bench", Index: i, Count: n, Planned: len(items), Plan: plan.Digest, Balance: plan.Balance}}
	}
	for k, it := range items {
		xs := make([]float64, 100)
		for j := range xs {
			xs[j] = 5 + rng.ExpFloat64()
		}
		s, _ := stats.Summarize(xs)
		lat := result.NewMetric("latency_ms")
		lat.Summary, lat.Samples = &s, xs
		tp, mem := 1000/s.Median, 2048.0
		bm, sn, _ := cutID(it.ID)
		r := runs[where[k]]
		r.Scenarios = append(r.Scenarios, result.Scenario{Benchmark: bm, Scenario: sn, Subject: "worker", Status: result.StatusOK,
			StartedAt: t0, DurationS: 3, Iterations: result.Iterations{Warmup: 10, Measured: 100},
			Metrics: map[string]result.Metric{"latency_ms": lat, "throughput_ips": {Unit: "items/s", Better: "higher", Value: &tp}, "memory_mb": {Unit: "MB", Better: "lower", Value: &mem}}})
		r.Shard.Assigned++
	}
	docs := make([][]byte, n)
	for i, r := range runs {
		r.Tally()
		docs[i], err = json.Marshal(r)
		if err != nil {
			b.Fatal(err)
		}
	}
	return docs
}

func cutID(id string) (string, string, bool) {
	for i := range len(id) {
		if id[i] == '/' {
			return id[:i], id[i+1:], true
		}
	}
	return id, "", false
}

func decodeAll(b testing.TB, docs [][]byte) []*result.Run {
	runs := make([]*result.Run, len(docs))
	for i, d := range docs {
		runs[i] = new(result.Run)
		if err := json.Unmarshal(d, runs[i]); err != nil {
			b.Fatal(err)
		}
	}
	return runs
}

// BenchmarkMergeShards merges 64 decoded shard runs of 1,000 scenarios each: the merge itself.
func BenchmarkMergeShards(b *testing.B) {
	runs := decodeAll(b, shardFiles(b, 64, 1000))
	b.ResetTimer()
	for b.Loop() {
		m, err := Runs(runs, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(m.Scenarios) != 64000 {
			b.Fatalf("%d scenarios", len(m.Scenarios))
		}
	}
}

// BenchmarkMergeShardsFromFiles is what `inferbench merge` does with 64 shard folders of 1,000
// scenarios (100 samples each): read and decode the run.json files (Load, in parallel), merge,
// and encode the merged run.json.
func BenchmarkMergeShardsFromFiles(b *testing.B) {
	docs := shardFiles(b, 64, 1000)
	dir := b.TempDir()
	paths := make([]string, len(docs))
	size := 0
	for i, d := range docs {
		paths[i] = filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		if err := os.WriteFile(paths[i], d, 0o644); err != nil {
			b.Fatal(err)
		}
		size += len(d)
	}
	b.ResetTimer()
	for b.Loop() {
		runs, err := Load(paths)
		if err != nil {
			b.Fatal(err)
		}
		m, err := Runs(runs, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := result.WriteJSON(io.Discard, m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size)/1e6, "MB-read")
}

// agentFiles returns the run.json documents of k agents that each measured perAgent requests of
// one serving scenario, with full-resolution histograms of ttft_ms, e2e_ms and itl_ms.
func agentFiles(b testing.TB, k, perAgent int) [][]byte {
	b.Helper()
	docs := make([][]byte, k)
	for a := range k {
		rng := rand.New(rand.NewPCG(uint64(a), 7))
		hs := map[string]*stats.Histogram{"ttft_ms": stats.NewHistogram(), "e2e_ms": stats.NewHistogram(), "itl_ms": stats.NewHistogram()}
		keep := map[string][]float64{}
		for i := range perAgent {
			ttft := 80 * math.Exp(0.5*rng.NormFloat64())
			itl := 8 * math.Exp(0.3*rng.NormFloat64())
			vals := map[string]float64{"ttft_ms": ttft, "itl_ms": itl, "e2e_ms": ttft + 255*itl}
			for name, v := range vals {
				hs[name].Add(v)
				if i%(perAgent/10000) == 0 { // the 10,000 samples a run keeps
					keep[name] = append(keep[name], v)
				}
			}
		}
		metrics := map[string]result.Metric{}
		for name, h := range hs {
			s, _ := h.Summary()
			m := result.NewMetric(name)
			m.Summary, m.Samples = &s, keep[name]
			metrics[name] = m
		}
		rps := 1000.0
		metrics["requests_per_s"] = result.Metric{Unit: "1/s", Better: "higher", Value: &rps}
		start := t0.Add(time.Duration(a) * time.Millisecond)
		end := start.Add(time.Duration(float64(perAgent)/rps) * time.Second)
		r := &result.Run{Schema: result.Schema, ID: fmt.Sprint("agent-", a), StartedAt: start, FinishedAt: end,
			Environment: map[string]any{"hostname": fmt.Sprint("client-", a)},
			Agent:       &result.AgentInfo{Group: "load", Index: a, Count: k, StartAt: t0},
			Scenarios: []result.Scenario{{Benchmark: "openai", Scenario: "rate=16000", Subject: "openai", Status: result.StatusOK,
				StartedAt: start, DurationS: float64(perAgent) / rps, Iterations: result.Iterations{Measured: perAgent}, Metrics: metrics,
				Extra: result.Extra{Histograms: hs, Window: &result.Window{Start: start, End: end, OK: perAgent}}}},
		}
		r.Tally()
		var err error
		if docs[a], err = json.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
	return docs
}

// BenchmarkMergeAgents merges 16 agents' runs of 1,000,000 requests each (histograms of three
// metrics per agent), from their run.json documents to the merged run's JSON, as `inferbench
// merge` does (result.Decode, Runs, result.WriteJSON).
func BenchmarkMergeAgents(b *testing.B) {
	docs := agentFiles(b, 16, 1_000_000)
	size := 0
	for _, d := range docs {
		size += len(d)
	}
	b.ResetTimer()
	for b.Loop() {
		runs := make([]*result.Run, len(docs))
		for i, d := range docs {
			var err error
			if runs[i], err = result.Decode(d, "run.json"); err != nil {
				b.Fatal(err)
			}
		}
		m, err := Runs(runs, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if s := m.Scenarios[0].Metrics["e2e_ms"].Summary; s.N != 16_000_000 {
			b.Fatalf("n = %d", s.N)
		}
		if err := result.WriteJSON(io.Discard, m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size)/16, "bytes/agent-run")
}

// TestWriteFixtures writes the benchmarks' inputs as run folders, for timing `inferbench merge`
// end to end (docs/performance.md): with INFERBENCH_MERGE_FIXTURES=DIR, DIR/shards/shard-NN/
// holds the 64 shards of 1,000 scenarios of BenchmarkMergeShardsFromFiles and DIR/agents/agent-NN/
// the 16 agents' runs of 1,000,000 requests of BenchmarkMergeAgents.
func TestWriteFixtures(t *testing.T) {
	dir := os.Getenv("INFERBENCH_MERGE_FIXTURES")
	if dir == "" {
		t.Skip("set INFERBENCH_MERGE_FIXTURES=DIR to write the merge benchmarks' run folders into DIR")
	}
	write := func(kind, name string, docs [][]byte) {
		for i, d := range docs {
			folder := filepath.Join(dir, kind, fmt.Sprintf("%s-%02d", name, i))
			if err := os.MkdirAll(folder, 0o755); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer // indented, as inferbench run writes run.json
			if err := json.Indent(&buf, d, "", "  "); err != nil {
				t.Fatal(err)
			}
			buf.WriteByte('\n')
			if err := os.WriteFile(filepath.Join(folder, result.RunFile), buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("shards", "shard", shardFiles(t, 64, 1000))
	write("agents", "agent", agentFiles(t, 16, 1_000_000))
}
