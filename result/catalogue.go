package result

import (
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

// Info describes a metric: its unit, which way is better, and a one-line definition. docs/metrics.md
// gives the full definitions; a test keeps the two in step.
type Info struct {
	Name   string
	Unit   string
	Better Direction
	Doc    string
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

// Lookup returns the catalogue entry for a metric name. Names not in the catalogue fall back on
// their suffix: "_ms"/"_s" are lower-is-better times, "_per_s"/"_ips"/"_rps" higher-is-better rates.
func Lookup(name string) (Info, bool) {
	catMu.RLock()
	i, ok := catalogue[name]
	catMu.RUnlock()
	if ok {
		return i, true
	}
	switch {
	case strings.HasSuffix(name, "_per_s"), strings.HasSuffix(name, "_ips"), strings.HasSuffix(name, "_rps"):
		return Info{Name: name, Unit: "1/s", Better: Higher}, false
	case strings.HasSuffix(name, "_ms"):
		return Info{Name: name, Unit: "ms", Better: Lower}, false
	case strings.HasSuffix(name, "_mb"):
		return Info{Name: name, Unit: "MB", Better: Lower}, false
	case strings.HasSuffix(name, "_s"):
		return Info{Name: name, Unit: "s", Better: Lower}, false
	}
	return Info{Name: name, Unit: "", Better: Lower}, false
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
		Info{"latency_ms", "ms", Lower, "time of one iteration; the subject's own timing when it reports one, else the harness round trip"},
		Info{"harness_latency_ms", "ms", Lower, "harness round trip of one iteration, kept when the subject timed itself"},
		Info{"throughput_ips", "items/s", Higher, "items processed per second of measured wall time"},
		Info{"iterations_per_s", "1/s", Higher, "measured iterations per second of measured wall time"},
		Info{"load_time_ms", "ms", Lower, "time to open the subject (load the model, start the process)"},
		Info{"compile_time_ms", "ms", Lower, "first call minus steady-state median, or the framework's reported compile time"},
		Info{"first_iteration_ms", "ms", Lower, "duration of the first call (warm-up included)"},
		Info{"memory_mb", "MB", Lower, "peak memory reported by the subject (e.g. the worker's RSS)"},
		Info{"gpu_memory_mb", "MB", Lower, "peak GPU memory allocated, reported by the subject"},
		Info{"success_rate", "ratio", Higher, "measured iterations that succeeded / measured iterations"},
		Info{"error_rate", "ratio", Lower, "measured iterations or requests that failed / attempted"},
		Info{"ttft_ms", "ms", Lower, "time to first token: first content token minus send"},
		Info{"ttft_coalesced_rate", "ratio", Lower, "streamed requests whose first content event arrived in one read with the next: their TTFT is an upper bound"},
		Info{"itl_ms", "ms", Lower, "inter-token latency: gap between consecutive content events, spread over the tokens each carries"},
		Info{"tpot_ms", "ms", Lower, "time per output token after the first: (end - first token) / (output tokens - 1)"},
		Info{"e2e_ms", "ms", Lower, "end-to-end request latency: end minus send"},
		Info{"output_tokens", "tokens", Higher, "output tokens per request"},
		Info{"input_tokens", "tokens", Lower, "input tokens per request"},
		Info{"output_tokens_per_s", "tokens/s", Higher, "output tokens per second of measured wall time"},
		Info{"requests_per_s", "1/s", Higher, "completed requests per second of measured wall time"},
	)
}
