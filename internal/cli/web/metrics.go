package web

import (
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferbench/inferbench/result"
)

// Metric names exported to Prometheus. Durations are in seconds and memory in bytes, as
// Prometheus conventions ask; docs/reports.md lists them.
const (
	metricDuration   = "inferbench_inference_duration_seconds"
	metricInferences = "inferbench_inferences_total"
	metricMemory     = "inferbench_memory_bytes"
	metricTTFT       = "inferbench_ttft_seconds"
	metricITL        = "inferbench_itl_seconds"
	metricScenarios  = "inferbench_scenarios"
	metricRunning    = "inferbench_scenario_running"
)

// Buckets of the duration histograms: 50 µs to about 100 s, doubling.
var (
	durationBuckets = prometheus.ExponentialBuckets(0.00005, 2, 22)
	tokenBuckets    = prometheus.ExponentialBuckets(0.0005, 2, 16) // 0.5 ms to about 16 s
)

var labels = []string{"benchmark", "scenario"}

var (
	descDuration   = prometheus.NewDesc(metricDuration, "Duration of one measured inference (the latency_ms metric), by benchmark and scenario.", labels, nil)
	descInferences = prometheus.NewDesc(metricInferences, "Measured inferences (iterations or requests), by benchmark, scenario and result.", append(labels, "result"), nil)
	descMemory     = prometheus.NewDesc(metricMemory, "Peak memory of the subject (the memory_mb metric), by benchmark and scenario.", labels, nil)
	descTTFT       = prometheus.NewDesc(metricTTFT, "Time to first token of serving requests, by benchmark and scenario.", labels, nil)
	descITL        = prometheus.NewDesc(metricITL, "Inter-token latency of serving requests, by benchmark and scenario.", labels, nil)
	descScenarios  = prometheus.NewDesc(metricScenarios, "Scenarios of the run, by status.", []string{"status"}, nil)
	descRunning    = prometheus.NewDesc(metricRunning, "1 while a scenario's measured window is open.", labels, nil)
)

// Metrics holds what /metrics exports: the scenarios of one run, as histograms built from their
// raw samples. It is fed whole scenarios (a finished run from the store, or each scenario of a
// live run as it completes) and is safe for concurrent use.
type Metrics struct {
	mu        sync.Mutex
	scenarios map[string]*scenarioMetrics // by benchmark/scenario
	statuses  map[string]int
	running   map[[2]string]bool
	runID     string
	partial   bool
}

type scenarioMetrics struct {
	bench, scenario string
	duration        *hist
	ttft, itl       *hist
	ok, failed      uint64
	memory          float64
	hasMemory       bool
}

// hist is a cumulative histogram in Prometheus's shape.
type hist struct {
	bounds []float64
	counts []uint64 // per bucket, not cumulative
	count  uint64
	sum    float64
}

func newHist(bounds []float64) *hist {
	return &hist{bounds: bounds, counts: make([]uint64, len(bounds))}
}

// addMS observes samples given in milliseconds, as seconds. When fewer samples were kept than the
// n measured (run --keep-samples), each kept sample stands for its share of the n, so that the
// count is n and the buckets keep the samples' shape.
func (h *hist) addMS(samples []float64, n int) {
	m := len(samples)
	if m == 0 {
		return
	}
	n = max(n, m)
	for i, v := range samples {
		k := uint64((i+1)*n/m - i*n/m)
		s := v / 1000
		if j := sort.SearchFloat64s(h.bounds, s); j < len(h.bounds) {
			h.counts[j] += k
		}
		h.count += k
		h.sum += s * float64(k)
	}
}

// histOf returns the histogram of a millisecond metric's samples, or nil when s has no summary
// of it.
func histOf(s *result.Scenario, metric string, bounds []float64) *hist {
	m := s.Metrics[metric]
	if m.Summary == nil {
		return nil
	}
	h := newHist(bounds)
	h.addMS(m.Samples, m.Summary.N)
	return h
}

func (h *hist) constMetric(d *prometheus.Desc, lv ...string) (prometheus.Metric, error) {
	buckets := make(map[float64]uint64, len(h.bounds))
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i]
		buckets[b] = cum
	}
	return prometheus.NewConstHistogram(d, h.count, h.sum, buckets, lv...)
}

// NewMetrics returns an empty Metrics.
func NewMetrics() *Metrics {
	return &Metrics{scenarios: map[string]*scenarioMetrics{}, statuses: map[string]int{}, running: map[[2]string]bool{}}
}

// SetRun replaces what is exported with the scenarios of r (the newest stored run).
func (m *Metrics) SetRun(r *result.Run) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r != nil && r.ID == m.runID && !r.Partial && !m.partial {
		return // the same finished run: nothing new
	}
	m.scenarios = map[string]*scenarioMetrics{}
	m.statuses = map[string]int{}
	m.runID = ""
	if r == nil {
		return
	}
	m.runID, m.partial = r.ID, r.Partial
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		delete(m.running, [2]string{s.Benchmark, s.Scenario})
		m.add(s)
	}
	if !r.Partial {
		clear(m.running)
	}
}

// Started marks a scenario's measured window open (live runs).
func (m *Metrics) Started(bench, scenario string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.running[[2]string{bench, scenario}] = true
}

// Add exports one finished scenario (live runs), replacing an earlier one of the same name.
func (m *Metrics) Add(s *result.Scenario) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.running, [2]string{s.Benchmark, s.Scenario})
	m.add(s)
}

func (m *Metrics) add(s *result.Scenario) {
	m.statuses[s.Status]++
	if s.Status == result.StatusSkipped {
		return
	}
	sm := &scenarioMetrics{bench: s.Benchmark, scenario: s.Scenario}
	sm.duration = histOf(s, "latency_ms", durationBuckets)
	if sm.duration == nil {
		sm.duration = histOf(s, "e2e_ms", durationBuckets)
	}
	sm.ttft = histOf(s, "ttft_ms", tokenBuckets)
	sm.itl = histOf(s, "itl_ms", tokenBuckets)
	sm.failed = uint64(s.Iterations.Failed)
	if s.Iterations.Measured >= s.Iterations.Failed {
		sm.ok = uint64(s.Iterations.Measured - s.Iterations.Failed)
	}
	if v, ok := s.Metrics["memory_mb"].Center(); ok {
		sm.memory, sm.hasMemory = v*1024*1024, true
	}
	m.scenarios[s.ID()] = sm
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDuration, descInferences, descMemory, descTTFT, descITL, descScenarios, descRunning} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := slices.Sorted(maps.Keys(m.scenarios))
	send := func(pm prometheus.Metric, err error) {
		if err == nil {
			ch <- pm
		} else {
			ch <- prometheus.NewInvalidMetric(descDuration, err)
		}
	}
	for _, k := range keys {
		s := m.scenarios[k]
		if s.duration != nil {
			send(s.duration.constMetric(descDuration, s.bench, s.scenario))
		}
		if s.ttft != nil {
			send(s.ttft.constMetric(descTTFT, s.bench, s.scenario))
		}
		if s.itl != nil {
			send(s.itl.constMetric(descITL, s.bench, s.scenario))
		}
		send(prometheus.NewConstMetric(descInferences, prometheus.CounterValue, float64(s.ok), s.bench, s.scenario, "ok"))
		send(prometheus.NewConstMetric(descInferences, prometheus.CounterValue, float64(s.failed), s.bench, s.scenario, "error"))
		if s.hasMemory {
			send(prometheus.NewConstMetric(descMemory, prometheus.GaugeValue, s.memory, s.bench, s.scenario))
		}
	}
	for _, st := range []string{result.StatusOK, result.StatusFailed, result.StatusSkipped} {
		send(prometheus.NewConstMetric(descScenarios, prometheus.GaugeValue, float64(m.statuses[st]), st))
	}
	for k := range m.running {
		send(prometheus.NewConstMetric(descRunning, prometheus.GaugeValue, 1, k[0], k[1]))
	}
}

var _ prometheus.Collector = (*Metrics)(nil)
