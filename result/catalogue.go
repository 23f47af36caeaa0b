package result

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Direction says which way a metric improves.
type Direction string

// Directions.
const (
	Lower  Direction = "lower"
	Higher Direction = "higher"
)

// Info describes a metric: its unit, which way is better, and a one-line definition.
// docs/metrics.md gives the full definitions; a test keeps the two in step.
type Info struct {
	Name   string
	Unit   string
	Better Direction
	Doc    string
	// Signed says the metric may be negative: a change over a window (rss_growth_mb falls when
	// memory is released), not an amount.
	Signed bool
}

var (
	catMu     sync.RWMutex
	catalogue = map[string]Info{}
)

// Define adds metrics to the catalogue. Packages that produce metrics define them in init.
func Define(infos ...Info) {
	catMu.Lock()
	defer catMu.Unlock()
	for _, i := range infos {
		catalogue[i.Name] = i
	}
}

// Lookup returns the catalogue entry for a metric name. Names not in the catalogue get a unit and
// direction from their words (Guess); ok is false for them.
func Lookup(name string) (Info, bool) {
	catMu.RLock()
	i, ok := catalogue[name]
	catMu.RUnlock()
	if ok {
		return i, true
	}
	i = guess(name)
	i.Signed = signedName(name)
	return i, false
}

// signedName reports whether a metric name outside the catalogue says it is a change or a
// difference, which may be negative: it has a word growth, delta, change, diff, difference,
// slope, overhead, gain, improvement, reduction or saving(s). An overhead_percent, a difference of
// two times, is slightly negative when noise makes the tracked run the faster.
// Amounts stay non-negative: cpu_percent, gpu_util_percent, memory_percent, error_rate.
func signedName(name string) bool {
	for _, w := range strings.Split(strings.ToLower(name), "_") {
		switch w {
		case "growth", "delta", "change", "diff", "difference", "slope", "overhead", "gain", "improvement", "reduction", "saving", "savings":
			return true
		}
	}
	return false
}

// Unknown is the direction of a metric whose name says nothing about which way is better and
// whose producer did not declare it: compare reports its changes and never gates on them.
const Unknown Direction = ""

// ParseDirection reads a declared direction: "higher" or "lower" (also "higher_is_better",
// "lower_is_better", "up", "down", "max", "min").
func ParseDirection(s string) (Direction, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "higher", "higher_is_better", "up", "max", "maximize", "maximise":
		return Higher, nil
	case "lower", "lower_is_better", "down", "min", "minimize", "minimise":
		return Lower, nil
	}
	return Unknown, fmt.Errorf("better %q: want higher or lower", s)
}

// guess gives a metric that no catalogue entry or declaration describes a unit and direction from
// its name, split into words at '_', '.', '-' and spaces:
//   - higher is better: rates (a "_per_s", "_ips", "_rps", "_qps", "_fps" suffix, "throughput",
//     "goodput", "qps", "fps", "rps"), "accuracy", "precision", "recall", "f1", "hit" rates
//     ("hit_rate", "cache_hit_ratio"), "success", "speedup";
//   - lower is better: times ("latency", "time", "duration", "elapsed", an "_ms", "_us", "_ns",
//     "_s" suffix), memory ("memory", "rss", an "_mb", "_gb", "_kb", "_bytes" suffix), "error",
//     "errors", "loss", "overhead", energy ("_j", "energy", "power", "_w");
//   - anything else: Unknown. A plain "size" is a count (a benchmark's result_size is len(result)):
//     unknown, unless a byte suffix makes it memory (model_size_mb).
//
// Rates win over the words of their numerator ("tokens_per_s" is higher), and "error" or "miss"
// over "rate" ("error_rate" is lower).
func guess(name string) Info {
	n := strings.ToLower(name)
	words := strings.FieldsFunc(n, func(r rune) bool { return r == '_' || r == '.' || r == '-' || r == ' ' || r == '/' })
	has := func(ws ...string) bool {
		for _, w := range words {
			if slices.Contains(ws, w) {
				return true
			}
		}
		return false
	}
	suffix := func(ss ...string) string {
		for _, s := range ss {
			if strings.HasSuffix(n, s) {
				return s
			}
		}
		return ""
	}
	higher := func(unit string) Info { return Info{Name: name, Unit: unit, Better: Higher} }
	lower := func(unit string) Info { return Info{Name: name, Unit: unit, Better: Lower} }
	switch {
	case has("error", "errors", "err", "failure", "failures", "failed", "miss", "misses", "loss", "overhead", "drop", "dropped", "timeout", "timeouts"):
		return lower(unitOf(n))
	case suffix("_per_s", "_per_sec", "_per_second", "_ips", "_rps", "_qps", "_fps", "_ops") != "",
		has("throughput", "goodput", "qps", "fps", "rps", "ips", "tps", "bandwidth", "flops", "gflops", "tflops"):
		return higher(rateUnit(n))
	case has("accuracy", "acc", "precision", "recall", "f1", "auc", "hit", "hits", "success", "speedup", "utilization", "utilisation"):
		return higher(unitOf(n))
	case has("latency", "time", "duration", "elapsed", "wait", "delay", "ttft", "itl", "tpot", "memory", "mem", "rss", "energy", "power"),
		suffix("_ms", "_us", "_ns", "_s", "_sec", "_seconds", "_mb", "_gb", "_kb", "_bytes", "_mib", "_gib", "_j", "_w") != "":
		return lower(unitOf(n))
	}
	return Info{Name: name, Better: Unknown}
}

// unitOf reads a unit off a name's suffix ("_ms" → ms); "" when it has none.
func unitOf(n string) string {
	for _, u := range []struct{ suffix, unit string }{
		{"_ms", "ms"}, {"_us", "µs"}, {"_ns", "ns"}, {"_seconds", "s"}, {"_sec", "s"}, {"_s", "s"},
		{"_mb", "MB"}, {"_mib", "MiB"}, {"_gb", "GB"}, {"_gib", "GiB"}, {"_kb", "kB"}, {"_bytes", "B"},
		{"_j", "J"}, {"_w", "W"}, {"_pct", "%"}, {"_percent", "%"}, {"_rate", "ratio"}, {"_ratio", "ratio"},
	} {
		if strings.HasSuffix(n, u.suffix) {
			return u.unit
		}
	}
	return ""
}

func rateUnit(n string) string {
	if i := strings.Index(n, "_per_s"); i > 0 {
		return n[strings.LastIndex(n[:i], "_")+1:i] + "/s"
	}
	return "1/s"
}

// The metrics of instruction mode (--measure instructions), counted under valgrind's callgrind.
const (
	InstructionsMetric = "instructions"
	EstCyclesMetric    = "est_cycles"
)

// primary are the metric spec's headline metrics: compare shows them first, the others on request.
var primary = map[string]bool{
	"latency_ms": true, "throughput_ips": true, "memory_mb": true, "gpu_memory_mb": true, "error_rate": true,
	"ttft_ms": true, "itl_ms": true, "tpot_ms": true, "e2e_ms": true, "ttft_sched_ms": true, "e2e_sched_ms": true,
	"output_tokens_per_s": true, "requests_per_s": true, "goodput_rps": true, "tokens_per_s": true,
	"cpu_pct": true, "peak_rss_mb": true, "instructions": true, "capacity_rps": true, "capacity_lower_rps": true,
}

// Primary reports whether a metric is a headline one: the metric spec's latency, throughput,
// memory, error and token figures, and every metric the catalogue does not define (a benchmark's
// own figures: what it reports is what its author looks at). Tail rows ("latency_ms.p95") follow
// their metric.
func Primary(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	if primary[base] {
		return true
	}
	catMu.RLock()
	_, defined := catalogue[base]
	catMu.RUnlock()
	return !defined
}

// Catalogue returns every defined metric, sorted by name.
func Catalogue() []Info {
	catMu.RLock()
	defer catMu.RUnlock()
	out := make([]Info, 0, len(catalogue))
	for _, i := range catalogue {
		out = append(out, i)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// NewMetric returns an empty metric carrying the catalogue's unit and direction for name.
func NewMetric(name string) Metric {
	i, _ := Lookup(name)
	return Metric{Unit: i.Unit, Better: string(i.Better)}
}

func init() {
	Define(
		Info{Name: "latency_ms", Unit: "ms", Better: Lower, Doc: "time of one iteration; the subject's own timing when it reports one, else the harness round trip"},
		Info{Name: "harness_latency_ms", Unit: "ms", Better: Lower, Doc: "harness round trip of one iteration, kept when the subject timed itself"},
		Info{Name: "cpu_ms", Unit: "ms", Better: Lower, Doc: "CPU time (user + system) of one iteration: a command's rusage, a Go function's thread clock, a worker call's process clock"},
		Info{Name: "throughput_ips", Unit: "items/s", Better: Higher, Doc: "items processed per second of measured wall time"},
		Info{Name: "iterations_per_s", Unit: "1/s", Better: Higher, Doc: "measured iterations per second of measured wall time"},
		Info{Name: "load_time_ms", Unit: "ms", Better: Lower, Doc: "time to open the subject (load the model, start the process)"},
		Info{Name: "compile_time_ms", Unit: "ms", Better: Lower, Doc: "first call minus steady-state median, or the framework's reported compile time"},
		Info{Name: "first_iteration_ms", Unit: "ms", Better: Lower, Doc: "duration of the first call (warm-up included)"},
		Info{Name: "memory_mb", Unit: "MB", Better: Lower, Doc: "peak memory reported by the subject (e.g. the worker's RSS)"},
		Info{Name: "gpu_memory_mb", Unit: "MB", Better: Lower, Doc: "peak GPU memory allocated, reported by the subject"},
		Info{Name: "success_rate", Unit: "ratio", Better: Higher, Doc: "measured iterations that succeeded / measured iterations"},
		Info{Name: "error_rate", Unit: "ratio", Better: Lower, Doc: "measured iterations or requests that failed / attempted"},
		Info{Name: "ttft_ms", Unit: "ms", Better: Lower, Doc: "time to first token: first content token minus send"},
		Info{Name: "ttft_coalesced_rate", Unit: "ratio", Better: Lower, Doc: "streamed requests whose first content event arrived in one read with the next: their TTFT is an upper bound"},
		Info{Name: "itl_ms", Unit: "ms", Better: Lower, Doc: "inter-token latency: gap between consecutive content events, spread over the tokens each carries"},
		Info{Name: "tpot_ms", Unit: "ms", Better: Lower, Doc: "time per output token after the first: (end - first token) / (output tokens - 1)"},
		Info{Name: "e2e_ms", Unit: "ms", Better: Lower, Doc: "end-to-end request latency: end minus send"},
		Info{Name: "output_tokens", Unit: "tokens", Better: Higher, Doc: "output tokens per request"},
		Info{Name: "input_tokens", Unit: "tokens", Better: Lower, Doc: "input tokens per request"},
		Info{Name: "output_tokens_per_s", Unit: "tokens/s", Better: Higher, Doc: "output tokens per second of measured wall time"},
		Info{Name: "requests_per_s", Unit: "1/s", Better: Higher, Doc: "completed requests per second of measured wall time"},
		Info{Name: "instructions", Unit: "count", Better: Lower, Doc: "instructions one iteration executed in user space, counted by valgrind's callgrind (--measure instructions)"},
		Info{Name: "est_cycles", Unit: "cycles", Better: Lower, Doc: "estimated cycles of one iteration from callgrind's cache simulation: Ir + 10 × L1 misses + 100 × LL misses (--measure instructions)"},
		// Serving loads (docs/metrics.md, "Serving"), reported by the load drivers.
		Info{Name: "ttft_sched_ms", Unit: "ms", Better: Lower, Doc: "time to first token from the scheduled send (open loop): free of coordinated omission"},
		Info{Name: "e2e_sched_ms", Unit: "ms", Better: Lower, Doc: "end-to-end latency from the scheduled send (open loop)"},
		Info{Name: "schedule_lag_ms", Unit: "ms", Better: Lower, Doc: "actual send minus scheduled send of each open-loop request: the client's own delay"},
		Info{Name: "goodput_rps", Unit: "1/s", Better: Higher, Doc: "requests meeting every SLO per second of measured wall time"},
		Info{Name: "client_cpu_cores", Unit: "cores", Better: Lower, Doc: "CPU time the client process used per second of measurement"},
		Info{Name: "late_requests", Unit: "requests", Better: Lower, Doc: "open-loop requests that waited for a slot under max_concurrency"},
		Info{Name: "dropped_requests", Unit: "requests", Better: Lower, Doc: "open-loop requests not sent because max_concurrency was reached (overflow drop)"},
		Info{Name: "steady_requests_per_s", Unit: "1/s", Better: Higher, Doc: "completed requests per second from the start of measurement until the closed loop began to drain"},
		Info{Name: "max_rps", Unit: "1/s", Better: Higher, Doc: "sweep: completed requests per second of the throughput step"},
		Info{Name: "synchronous_rps", Unit: "1/s", Better: Higher, Doc: "sweep: completed requests per second of the synchronous step"},
		Info{Name: "slo_max_rps", Unit: "1/s", Better: Higher, Doc: "sweep: highest rate found whose SLOs hold (0 when none did)"},
	)
}
