package engine

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/inferbench/inferbench/internal/base/unit"
	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/subject"
)

// collector is the engine's Sink: it turns observations into metric distributions as they arrive,
// holding only numbers (never whole observations), so memory stays bounded by the Dist limits.
// The distributions and the measured window are its figures.Figures, where each request's figures
// are derived once: a serving load reads its SLO verdicts, goodput and sweep steps from them
// (figures.Keeper), so they are judged on the samples run.json reports.
type collector struct {
	mu        sync.Mutex
	onPhase   func(load.Phase)
	onObserve func(load.Phase, int)

	figs     *figures.Figures
	peaks    map[string]float64
	warmup   int
	measured int
	failed   int
	errs     []result.IterationError
	errKinds map[string]int
	// skip is the first failed call's reason the scenario cannot run here (a subject error with
	// a SkipReason: a module a Python benchmark imports in its body), skips how many failed so.
	skip  string
	skips int

	first        time.Duration // duration of the very first call
	firstSeen    bool
	items        int
	outputTokens int
	counted      bool
	empty        int      // measured streamed requests that ended with no content
	emptyTokens  int      // the output tokens the server reported for those
	rep          reported // figures from serving drivers (report.go)
}

// newCollector returns a collector of a scenario under load c, holding at most maxSamples raw
// samples per metric.
func newCollector(maxSamples int, c load.Config) *collector {
	return &collector{figs: figures.New(maxSamples, c.SLO, c.Serving(), c.Slice), peaks: map[string]float64{}, errKinds: map[string]int{}}
}

// peakMetrics are subject values reported as their maximum rather than a distribution
// (peak_rss_mb: an exec command's own peak RSS, per iteration).
var peakMetrics = map[string]bool{"memory_mb": true, "gpu_memory_mb": true, "peak_memory_mb": true, "peak_rss_mb": true}

func (c *collector) Begin(p load.Phase) {
	if p == load.Measure {
		c.mu.Lock()
		c.figs.Begin()
		c.mu.Unlock()
	}
	if c.onPhase != nil {
		c.onPhase(p)
	}
}

// WithFigures implements figures.Keeper.
func (c *collector) WithFigures(f func(*figures.Figures)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c.figs)
}

// cpuMetric is the metric Observation.CPU is recorded as.
const cpuMetric = "cpu_ms"

func (c *collector) Observe(p load.Phase, o subject.Observation, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.firstSeen && !o.Start.IsZero() {
		c.firstSeen = true
		c.first = o.End.Sub(o.Start)
		if v, ok := o.Values["latency_ms"]; ok {
			c.first = time.Duration(v * 1e6)
		}
	}
	if p == load.Warmup {
		c.warmup++
		if c.onObserve != nil {
			c.onObserve(p, c.warmup)
		}
		return
	}
	c.measured++
	if c.onObserve != nil {
		defer c.onObserve(p, c.measured)
	}
	if err == nil {
		err = checkObservation(&o)
	}
	out, streamed := c.figs.Observe(o, err)
	if err != nil {
		c.failed++
		msg := err.Error()
		c.errKinds[errorKind(err)]++
		var sk interface{ SkipReason() string }
		if errors.As(err, &sk) && sk.SkipReason() != "" {
			if c.skips++; c.skip == "" {
				c.skip = sk.SkipReason()
			}
		}
		if len(c.errs) < result.MaxIterationErrors {
			c.errs = append(c.errs, result.IterationError{Iteration: c.measured - 1, Error: msg})
		}
		return
	}
	if o.Start.IsZero() {
		return
	}
	round := unit.MS(o.End.Sub(o.Start))
	if v, ok := o.Values["latency_ms"]; ok {
		c.figs.Add("latency_ms", v)
		c.figs.Add("harness_latency_ms", round)
	} else {
		c.figs.Add("latency_ms", round)
	}
	items := o.Items
	if items <= 0 {
		items = 1
	}
	c.items += items
	for k, v := range o.Values {
		switch {
		case k == "latency_ms":
		case peakMetrics[k]:
			if v > c.peaks[k] {
				c.peaks[k] = v
			}
		default:
			c.figs.Add(k, v)
		}
	}
	if _, own := o.Values[cpuMetric]; o.CPU > 0 && !own {
		c.figs.Add(cpuMetric, unit.MS(o.CPU))
	}
	if streamed {
		c.countTokens(o, out)
	} else if o.Streamed {
		c.empty++
		c.emptyTokens += o.OutputTokens
	}
}

// countTokens counts the tokens of a request that streamed out tokens (the figures derived its
// generation metrics).
func (c *collector) countTokens(o subject.Observation, out int) {
	if o.TokensCounted || o.OutputTokens == 0 {
		c.counted = true
	}
	c.figs.Add("output_tokens", float64(out))
	if o.InputTokens > 0 {
		c.figs.Add("input_tokens", float64(o.InputTokens))
	}
	c.outputTokens += out
}

// errorKind groups errors for counting: a subject error may say its kind (an HTTP status).
func errorKind(err error) string {
	var k interface{ Kind() string }
	if errors.As(err, &k) {
		return k.Kind()
	}
	return "error"
}

// fill writes the collected metrics into r.
func (c *collector) fill(r *result.Scenario, keep int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r.Iterations = result.Iterations{Warmup: c.warmup, Measured: c.measured, Failed: c.failed}
	r.Errors = c.errs
	if r.Metrics == nil {
		r.Metrics = map[string]result.Metric{}
	}
	c.figs.Each(func(name string, d *stats.Dist) {
		s, err := d.Summary()
		if err != nil {
			return
		}
		m := result.NewMetric(name)
		m.Summary = &s
		m.Samples = Thin(d.Samples(), keep)
		r.Metrics[name] = m
	})
	for name, v := range c.peaks {
		setValue(r, name, v)
	}
	// compile_time_ms is only what a subject that compiles reports (subject.Setup): a first call
	// minus the steady state is not a compile time for a function or a command that compiles
	// nothing, and showed there as noise. first_iteration_ms keeps the first call's cost.
	if c.firstSeen {
		setValue(r, "first_iteration_ms", unit.MS(c.first))
	}
	if c.measured > 0 {
		setValue(r, "success_rate", float64(c.measured-c.failed)/float64(c.measured))
		setValue(r, "error_rate", float64(c.failed)/float64(c.measured))
	}
	if start, end := c.figs.Window(); end.Sub(start) > 0 {
		win := end.Sub(start).Seconds()
		ok := float64(c.measured - c.failed)
		setValue(r, "throughput_ips", float64(c.items)/win)
		setValue(r, "iterations_per_s", ok/win)
		if c.outputTokens > 0 {
			setValue(r, "output_tokens_per_s", float64(c.outputTokens)/win)
			setValue(r, "requests_per_s", ok/win)
		}
	}
	if co, _ := c.figs.Coalescing(); co.Streamed > 0 {
		setValue(r, "ttft_coalesced_rate", co.TTFTRate())
	}
	if c.counted {
		if m, ok := r.Metrics["output_tokens"]; ok {
			m.Note = "counted from content events: the subject reported no usage"
			r.Metrics["output_tokens"] = m
		}
	}
	if c.empty > 0 {
		// A stream with no content has no first token: it is left out of TTFT, ITL and the
		// token rates, which would otherwise describe only the requests that did stream.
		said := ""
		if c.emptyTokens > 0 {
			said = fmt.Sprintf(" (the server reported %d output tokens for them: content in a field inferbench does not read?)", c.emptyTokens)
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d of %d successful streamed requests ended with no content%s: TTFT, ITL and token rates leave them out; check max_tokens, the prompt and the server's stream", c.empty, c.measured-c.failed, said))
	}
	c.rep.fill(r)
	c.fillScaleout(r)
	if len(c.errKinds) > 0 {
		r.Extra.ErrorsByKind = c.errKinds
	}
}

func setValue(r *result.Scenario, name string, v float64) {
	m := result.NewMetric(name)
	m.Value = &v
	r.Metrics[name] = m
}

// Thin returns at most keep of the samples xs, evenly spaced (deterministic): keep 0 is
// DefaultKeepSamples, a negative keep keeps them all. It is the one meaning of every option that
// bounds the samples kept (run's, merge's, the engine's).
func Thin(xs []float64, keep int) []float64 {
	if keep == 0 {
		keep = DefaultKeepSamples
	}
	if keep < 0 || len(xs) <= keep {
		return append([]float64(nil), xs...)
	}
	out := make([]float64, keep)
	step := float64(len(xs)) / float64(keep)
	for i := range out {
		out[i] = xs[int(float64(i)*step)]
	}
	return out
}

var (
	_ load.Sink      = (*collector)(nil)
	_ figures.Keeper = (*collector)(nil)
)
