package compare

import (
	"slices"
	"strings"

	"github.com/inferbench/inferbench/result"
)

// Gating: which rows of a comparison can fail it. A gate that fails on code nobody changed gets
// switched off, so by default only what the user measures gates: a scenario's primary metrics
// (its definition's `gate:` list, else defaultGate for its subject kind), the figures the user's
// own code reports (OwnMetric: a command's JSON line, a Python function's dict, imported
// results) where their direction is known, and a CPU-bound scenario's cpu_ms (cpu.go). Every
// other figure (CPU use, RSS, I/O, the harness's own overhead, counts, load time) is compared and
// shown with its change as information (verdict Info) and gates only when asked: `gate:` in the
// definition or --gate (Config.Gate). Whatever the gate, a metric with no samples never fails (it
// is Unverified at worst: budgets bound single values) and a metric of unknown direction never
// fails (Changed).
//
// By default only the median row of a function's or model's latency gates: its p95 and p99 move
// with the machine's load (an unchanged 0.2 µs function read +69% at p99). Serving keeps its
// tails, which are its service levels. A name in `gate:` or --gate gates its tail rows too.

// gateAll in Config.Gate gates every metric with a known direction (the behaviour before gating).
const gateAll = "all"

// defaultGates are the primary metrics of each subject kind, in order of preference: the first
// list of which the scenario has at least one metric is its gate.
var defaultGates = map[string][][]string{
	// Serving: what a user of the server sees. Without streaming there is no TTFT: e2e_ms. A
	// capacity search's latencies mix its steps: its figure is the capacity.
	"openai": {{"capacity_rps"}, {"ttft_ms", "itl_ms", "output_tokens_per_s"}, {"e2e_ms"}},
	// A worker runs a model (latency) or an LLM (tokens/s and TTFT).
	"worker": {{"tokens_per_s", "ttft_ms"}, {"latency_ms"}},
}

// fallbackGates are the primary metrics of every other kind (exec, gofunc, mock, imports of other
// tools' results, runs recorded without a kind): latency, else a serving scenario's figures.
var fallbackGates = [][]string{{"latency_ms"}, {"ttft_ms", "itl_ms", "output_tokens_per_s"}, {"tokens_per_s", "ttft_ms"}, {"e2e_ms"}}

// defaultGate returns the primary metrics of scenario s when its definition names none: the
// subject kind's, those of them s measured. Latency for models, commands and Go functions
// (latency_ms); TTFT, ITL and output throughput for serving (ttft_ms, itl_ms,
// output_tokens_per_s; e2e_ms when not streamed); tokens/s and TTFT for an LLM in a worker. Nil
// when s has none of them.
func defaultGate(s *result.Scenario) []string {
	if _, ok := s.Metrics[result.InstructionsMetric]; ok {
		return []string{result.InstructionsMetric} // instruction mode: the count is what was asked for
	}
	lists, ok := defaultGates[s.Subject]
	if !ok {
		lists = fallbackGates
	}
	for _, l := range lists {
		var out []string
		for _, m := range l {
			if _, ok := s.Metrics[m]; ok {
				out = append(out, m)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// gateMatches reports whether gate entry e (a metric, or a metric and statistic) covers row metric
// m ("latency_ms" or "latency_ms.p95"): the same name, or m's base name when e has no statistic.
func gateMatches(e, m string) bool {
	if e == gateAll || e == m {
		return true
	}
	base, _, _ := strings.Cut(m, ".")
	return e == base
}

// servingGate reports whether a default gate list is a serving one (TTFT, ITL, tokens/s, e2e):
// its tail rows gate with it.
func servingGate(list []string) bool {
	return !slices.Equal(list, []string{"latency_ms"}) && !slices.Equal(list, []string{result.InstructionsMetric})
}

// Gated reports whether a row of metric m ("latency_ms", "latency_ms.p95") of scenario s can fail
// the comparison under c: m is one of s's primary metrics (its definition's gate list, else the
// subject kind's defaults, the median row only, except for serving), or c.Gate names it (for
// every benchmark, or as "BENCHMARK:METRIC" for s's). A gated row still fails only when it is a significant change of
// known direction worse than its threshold (Row.Failed). The user's own metrics (OwnMetric) and
// a CPU-bound scenario's cpu_ms gate too; scenarioRows adds them, knowing their direction.
func (c Config) Gated(s *result.Scenario, m string) bool {
	if len(s.Gate) > 0 {
		return c.asked(s, m)
	}
	if d := defaultGate(s); slices.Contains(d, m) || (servingGate(d) && matchGate(s, d, m)) {
		return true
	}
	return matchGate(s, c.Gate, m)
}

// asked reports whether the user named row metric m of s: in its definition's `gate:` or with
// --gate (c.Gate). A name covers its tail rows.
func (c Config) asked(s *result.Scenario, m string) bool {
	return matchGate(s, s.Gate, m) || matchGate(s, c.Gate, m)
}

// matchGate reports whether one of the gate entries covers row metric m of s.
func matchGate(s *result.Scenario, entries []string, m string) bool {
	return slices.ContainsFunc(entries, func(e string) bool {
		if b, metric, ok := strings.Cut(e, ":"); ok {
			return b == s.Benchmark && gateMatches(metric, m)
		}
		return gateMatches(e, m)
	})
}

// ownMetric reports whether metric name (a median row, not a tail) is one the user's code
// reported itself: a name the catalogue does not define (a command's JSON or CSV figures, a Python
// function's returned dict, imported pytest-benchmark or Go benchmark figures). Such a figure is
// what its author measures: it gates by default where its direction is known and the scenario's
// definition has no `gate:` list of its own.
func ownMetric(name string) bool {
	if strings.Contains(name, ".") {
		return false
	}
	_, defined := result.Lookup(name)
	return !defined
}
