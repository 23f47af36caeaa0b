// Package scrape reads an inference server's own Prometheus endpoint during a serving scenario, so
// that a latency knee can be read next to the server's queue: requests running and waiting, the
// batch being decoded, the KV cache's use. vLLM, SGLang, TGI and llama.cpp (llama-server
// --metrics) each name these differently; Sampler maps their names onto server_* gauges of the
// monitor (package monitor), which puts them in the scenario's timelines and report.
//
// It is the only package that parses the Prometheus text format (prometheus/common/expfmt).
package scrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/inferbench/inferbench/internal/monitor"
)

// DefaultEvery is how often the endpoint is scraped: servers compute some of these gauges per
// scrape, and vLLM's page is tens of kilobytes.
const DefaultEvery = time.Second

// series maps one server's metric onto a gauge: the family name, and the factor to the gauge's
// unit (ratios 0..1 become percent).
type series struct {
	family string
	scale  float64
}

// gauges are the server_* gauges, each with its source per server, first match wins. Series of a
// family with several label sets (vLLM's engines, per-model series) are summed for counts and
// averaged for percentages.
var gauges = []struct {
	metric  monitor.Metric
	average bool
	from    []series
}{
	{monitor.Metric{Name: "server_running_requests", Unit: "requests", Help: "requests the server is processing (in its running batch), from its Prometheus endpoint"}, false, []series{
		{"vllm:num_requests_running", 1}, {"sglang:num_running_reqs", 1}, {"llamacpp:requests_processing", 1}, {"tgi_batch_current_size", 1}}},
	{monitor.Metric{Name: "server_waiting_requests", Unit: "requests", Better: monitor.Lower, Help: "requests queued at the server, not yet scheduled, from its Prometheus endpoint"}, false, []series{
		{"vllm:num_requests_waiting", 1}, {"sglang:num_queue_reqs", 1}, {"llamacpp:requests_deferred", 1}, {"tgi_queue_size", 1}}},
	{monitor.Metric{Name: "server_kv_cache_pct", Unit: "%", Help: "the server's KV-cache use, from its Prometheus endpoint (vLLM, SGLang)"}, true, []series{
		{"vllm:kv_cache_usage_perc", 100}, {"vllm:gpu_cache_usage_perc", 100}, {"sglang:token_usage", 100}, {"llamacpp:kv_cache_usage_ratio", 100}}},
	{monitor.Metric{Name: PrefixCacheHit, Unit: "%", Help: "the share of prompt tokens the server found in its prefix cache, from its Prometheus endpoint (vLLM, SGLang, llama.cpp)"}, true, []series{
		{"vllm:gpu_prefix_cache_hit_rate", 100}, {"sglang:cache_hit_rate", 100}}},
	{monitor.Metric{Name: "server_batch_size", Unit: "requests", Help: "sequences per decode step at the server, from its Prometheus endpoint (llama.cpp: busy slots per decode, TGI: current batch)"}, true, []series{
		{"llamacpp:n_busy_slots_per_decode", 1}, {"tgi_batch_current_size", 1}}},
}

// PrefixCacheHit is the gauge of the server's prefix-cache hit rate: SGLang's and older vLLM's
// own gauge, or, from a server's counters of prompt tokens (prefixCounters), the tokens found in
// the cache over all prompt tokens since the scenario's first scrape: the counters also hold
// every earlier run's.
const PrefixCacheHit = "server_prefix_cache_hit_pct"

// PrefixCachePrior is the gauge of the server's prefix-cache hit rate before the scenario: its
// counters' hits over their prompt tokens at the first scrape, everything the server served
// before (a server whose cache was used and may hold earlier runs' prompts), 0 for a new one.
const PrefixCachePrior = "server_prefix_cache_prior_pct"

// PromptTokensBefore is the gauge of the prompt tokens the server's prefix-cache counters had
// counted before the scenario (at the first scrape): above 0, its cache may hold earlier runs'
// prompts.
const PromptTokensBefore = "server_prompt_tokens_before"

// priorMetrics describe PrefixCachePrior and PromptTokensBefore.
var priorMetrics = []monitor.Metric{
	{Name: PrefixCachePrior, Unit: "%", Help: "the server's prefix-cache hit rate over everything it served before the scenario, from its counters (vLLM, llama.cpp, the mockserver)"},
	{Name: PromptTokensBefore, Unit: "tokens", Help: "the prompt tokens the server's prefix-cache counters had counted before the scenario (vLLM, llama.cpp, the mockserver)"},
}

// prefixCounters are the counters of prompt tokens a server found in its prefix cache, by the
// names the text format gives them, with those of the other prompt tokens: vLLM counts the
// tokens it looked up (queries: all of them) and found; llama.cpp (llama-server --metrics) the
// tokens it processed (prompt_tokens_total: those it did not find) and those it took from the
// cache (prompt_tokens_cached_total), as each response's timings.prompt_n and cache_n.
var prefixCounters = []struct {
	hits, other []string
	otherAll    bool // other counts every prompt token, the hits among them
}{
	{hits: []string{"vllm:prefix_cache_hits", "vllm:prefix_cache_hits_total"}, other: []string{"vllm:prefix_cache_queries", "vllm:prefix_cache_queries_total"}, otherAll: true},
	{hits: []string{"llamacpp:prompt_tokens_cached_total", "llamacpp:prompt_tokens_cached"}, other: []string{"llamacpp:prompt_tokens_total", "llamacpp:prompt_tokens"}},
}

// Sampler scrapes one Prometheus endpoint. It is a monitor.Sampler; Sample scrapes at most once
// per Every and reports nothing between scrapes.
type Sampler struct {
	url    string
	every  time.Duration
	client *http.Client
	last   time.Time

	mu     sync.Mutex
	server string // the server the names matched ("vllm", ...), once seen

	base [2]float64 // the prefix-cache counters (prompt tokens, hits) at the first scrape
	had  bool       // base is set
}

var _ monitor.Sampler = (*Sampler)(nil)

// New returns a Sampler of url (e.g. http://127.0.0.1:8000/metrics), scraped every every
// (DefaultEvery when 0).
func New(url string, every time.Duration) *Sampler {
	if every <= 0 {
		every = DefaultEvery
	}
	return &Sampler{url: url, every: every, client: &http.Client{Timeout: 2 * time.Second}}
}

// Name returns "server".
func (s *Sampler) Name() string { return "server" }

// URL returns the endpoint.
func (s *Sampler) URL() string { return s.url }

// Server returns which server's names matched the last scrape ("vllm", "sglang", "tgi",
// "llamacpp"), or "".
func (s *Sampler) Server() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.server
}

// Metrics lists the server_* gauges.
func (s *Sampler) Metrics() []monitor.Metric {
	out := make([]monitor.Metric, len(gauges), len(gauges)+len(priorMetrics))
	for i, g := range gauges {
		out[i] = g.metric
	}
	return append(out, priorMetrics...)
}

// Sample scrapes the endpoint when a scrape is due and appends the gauges the server has.
func (s *Sampler) Sample(now time.Time, out []monitor.Value) ([]monitor.Value, error) {
	if !s.last.IsZero() && now.Sub(s.last) < s.every {
		return out, nil
	}
	s.last = now
	fams, err := s.scrape(context.Background())
	if err != nil {
		return out, err
	}
	vals, server := Gauges(fams)
	if server != "" {
		s.mu.Lock()
		s.server = server
		s.mu.Unlock()
	}
	if c, ok := counters(fams); ok {
		if !s.had {
			s.base, s.had = c, true
		} else if q := c[0] - s.base[0]; q > 0 {
			vals = append(vals, monitor.Value{Name: PrefixCacheHit, V: 100 * (c[1] - s.base[1]) / q})
		}
		prior := 0.0
		if s.base[0] > 0 {
			prior = 100 * s.base[1] / s.base[0]
		}
		vals = append(vals, monitor.Value{Name: PrefixCachePrior, V: prior}, monitor.Value{Name: PromptTokensBefore, V: s.base[0]})
	}
	return append(out, vals...), nil
}

// counters reads the first server's prefix-cache counters that fams has, summed over their
// series: the prompt tokens and those found in the cache.
func counters(fams map[string]*dto.MetricFamily) (c [2]float64, ok bool) {
	sum := func(names []string) (total float64, found bool) {
		for _, name := range names {
			if f, has := fams[name]; has {
				for _, m := range f.GetMetric() {
					if v, ok := value(m); ok {
						total += v
						found = true
					}
				}
			}
		}
		return total, found
	}
	for _, pc := range prefixCounters {
		hits, ok1 := sum(pc.hits)
		other, ok2 := sum(pc.other)
		if !ok1 || !ok2 {
			continue
		}
		if !pc.otherAll {
			other += hits
		}
		return [2]float64{other, hits}, true
	}
	return c, false
}

func (s *Sampler) scrape(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", s.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("scraping %s: HTTP %d", s.url, resp.StatusCode)
	}
	return Parse(io.LimitReader(resp.Body, 16<<20))
}

// Parse reads the Prometheus text format.
func Parse(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("prometheus text: %w", err)
	}
	return fams, nil
}

// Gauges maps a server's metric families onto the server_* gauges, and says whose names
// matched.
func Gauges(fams map[string]*dto.MetricFamily) (vals []monitor.Value, server string) {
	for _, g := range gauges {
		for _, src := range g.from {
			f, ok := fams[src.family]
			if !ok || len(f.GetMetric()) == 0 {
				continue
			}
			var sum float64
			n := 0
			for _, m := range f.GetMetric() {
				v, ok := value(m)
				if !ok {
					continue
				}
				sum += v
				n++
			}
			if n == 0 {
				continue
			}
			if g.average {
				sum /= float64(n)
			}
			vals = append(vals, monitor.Value{Name: g.metric.Name, V: sum * src.scale})
			if server == "" {
				server = serverOf(src.family)
			}
			break
		}
	}
	return vals, server
}

func value(m *dto.Metric) (float64, bool) {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}

func serverOf(family string) string {
	if i := strings.IndexByte(family, ':'); i > 0 {
		return family[:i]
	}
	if strings.HasPrefix(family, "tgi_") {
		return "tgi"
	}
	return ""
}

// ErrNoServerMetrics is returned by Probe for an endpoint with none of the known names.
var ErrNoServerMetrics = errors.New("no metric of vLLM, SGLang, TGI or llama.cpp")

// Probe scrapes url once and reports whether it is a Prometheus endpoint with server gauges,
// returning the server's name ("vllm", ...).
func Probe(ctx context.Context, url string) (string, error) {
	s := New(url, 0)
	fams, err := s.scrape(ctx)
	if err != nil {
		return "", err
	}
	vals, server := Gauges(fams)
	if len(vals) == 0 {
		names := make([]string, 0, len(fams))
		for n := range fams {
			names = append(names, n)
		}
		sort.Strings(names)
		if len(names) > 5 {
			names = append(names[:5], "...")
		}
		return "", fmt.Errorf("%s: %w (it has %s)", url, ErrNoServerMetrics, strings.Join(names, ", "))
	}
	return server, nil
}
