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

// Lookup returns the catalogue entry for a metric name. Names not in the catalogue fall back on
// their suffix: "_ms"/"_s" are lower-is-better times, "_per_s"/"_ips"/"_rps" higher-is-better rates.
func Lookup(name string) (Info, bool) {
	catMu.RLock()
	i, ok := catalogue[name]
	catMu.RUnlock()
	if ok {
		return i, true
	}
	i, ok = lookupSuffix(name)
	i.Signed = signedName(name)
	return i, ok
}

// signedName reports whether a metric name outside the catalogue says it is a change, which may
// be negative: it has a word growth, delta, change, diff or slope.
func signedName(name string) bool {
	for _, w := range strings.Split(name, "_") {
		switch w {
		case "growth", "delta", "change", "diff", "slope":
			return true
		}
	}
	return false
}

func lookupSuffix(name string) (Info, bool) {
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
		Info{Name: "latency_ms", Unit: "ms", Better: Lower, Doc: "time of one iteration; the subject's own timing when it reports one, else the harness round trip"},
		Info{Name: "harness_latency_ms", Unit: "ms", Better: Lower, Doc: "harness round trip of one iteration, kept when the subject timed itself"},
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
	)
}
