package result

import (
	"fmt"
	"strings"
	"time"

	"github.com/inferbench/inferbench/stats"
)

// Schema identifies the version of run.json.
const Schema = "inferbench/run/v1"

// Scenario statuses.
const (
	StatusOK      = "ok"      // measured, with no failed iteration
	StatusFailed  = "failed"  // the scenario could not run, or an iteration failed
	StatusSkipped = "skipped" // a requirement was not met; see SkipReason
)

// Run is everything one invocation of `inferbench run` measured.
type Run struct {
	Schema     string    `json:"schema"`
	ID         string    `json:"id"`
	Partial    bool      `json:"partial"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Environment is the fingerprint of the machine and the code (see package sysinfo).
	Environment map[string]any `json:"environment"`
	Config      Config         `json:"config"`
	Summary     Summary        `json:"summary"`
	Scenarios   []Scenario     `json:"scenarios"`
	// Shard, Agent and Merged are scale-out's (scaleout.go): one shard or agent of a group, or a
	// merge of a group's runs.
	Shard  *ShardInfo `json:"shard,omitempty"`
	Agent  *AgentInfo `json:"agent,omitempty"`
	Merged *MergeInfo `json:"merged,omitempty"`
}

// Config records how the run was asked for.
type Config struct {
	Args    []string          `json:"args,omitempty"`
	Dir     string            `json:"dir,omitempty"`
	Filters map[string]string `json:"filters,omitempty"`
	Set     map[string]string `json:"set,omitempty"`
}

// Summary counts scenarios by status.
type Summary struct {
	Total       int     `json:"total"`
	Succeeded   int     `json:"succeeded"`
	Failed      int     `json:"failed"`
	Skipped     int     `json:"skipped"`
	SuccessRate float64 `json:"success_rate"` // succeeded / (total - skipped); 1 when nothing ran
	// Certificates counts the scenarios by their certificate's verdict (is it the server's
	// number?); absent when no scenario has one.
	Certificates CertCounts `json:"certificates,omitzero"`
}

// CertCounts counts scenarios by their certificate's verdict.
type CertCounts struct {
	Pass int `json:"pass,omitempty"`
	Warn int `json:"warn,omitempty"`
	Fail int `json:"fail,omitempty"`
}

// Scenario is the result of one point of one benchmark's matrix.
type Scenario struct {
	Benchmark  string         `json:"benchmark"`
	Scenario   string         `json:"scenario"`
	Category   string         `json:"category,omitempty"`
	Model      string         `json:"model,omitempty"`
	Tags       []string       `json:"tags,omitempty"`
	Source     string         `json:"source,omitempty"` // file:line of the definition
	Subject    string         `json:"subject"`          // the subject kind
	Params     map[string]any `json:"params,omitempty"`
	Status     string         `json:"status"`
	Error      string         `json:"error,omitempty"`
	SkipReason string         `json:"skip_reason,omitempty"`
	Warnings   []string       `json:"warnings,omitempty"`
	// Profiles are the files --profile wrote for the scenario, relative to the run folder.
	Profiles []string `json:"profiles,omitempty"`
	// Logs are the files holding what the scenario's subject processes wrote on stdout and
	// stderr (logs/BENCHMARK__SCENARIO.log: a command's output, a worker's log with the
	// benchmark's print() and logging output), redacted and bounded, relative to the run folder.
	Logs       []string   `json:"logs,omitempty"`
	StartedAt  time.Time  `json:"started_at,omitzero"`
	DurationS  float64    `json:"duration_s"`
	Iterations Iterations `json:"iterations"`
	// Metrics by name; see Catalogue for units and directions.
	Metrics map[string]Metric `json:"metrics,omitempty"`
	// Budgets are the definition's limits per metric, e.g. "latency_ms.p95": "<= 25".
	Budgets map[string]string `json:"budgets,omitempty"`
	// Gate names the metrics whose regression fails a comparison (the definition's `gate:`,
	// e.g. ["latency_ms", "peak_rss_mb"]); empty: the subject kind's primary metrics
	// (compare's defaultGate). The others are compared as information.
	Gate []string `json:"gate,omitempty"`
	// Thresholds are the regression thresholds, in percent, the scenario was gated with where
	// it was measured (the pytest plugin's: latency_ms 5, instructions 2), by metric name, name
	// and statistic, or kind. compare judges by them where its own --threshold and thresholds
	// file say nothing of the metric, so that any comparison of the run judges as its maker did.
	Thresholds map[string]float64 `json:"thresholds,omitempty"`
	// Strict, the definition's `strict: true`, makes a gated change beyond its threshold that
	// could not be tested fail a comparison of the scenario, as --strict does for all.
	Strict bool `json:"strict,omitempty"`
	// Counted, set in instruction mode (--measure instructions), is what the instruction counts
	// depend on besides the code: the valgrind version, the CPU and its features, the simulated
	// cache, the interpreter. compare compares counts only between equal identities.
	Counted map[string]string `json:"counted,omitempty"`
	// Errors holds the first failed iterations' errors (bounded; Iterations.Failed has the count).
	Errors []IterationError `json:"errors,omitempty"`
	// Environment is the subject's own description: framework, versions, device.
	Environment map[string]any `json:"environment,omitempty"`
	// Extra holds the typed sections beyond the metrics: resources and their timelines, the
	// server, SLOs, the steady window, sweep steps, errors by kind (see Extra).
	Extra Extra `json:"extra,omitzero"`
}

// ExpectedPrefix starts a warning that explains an expected effect rather than raising an alarm
// (a high CV on a call of a few hundred nanoseconds, the profiling pass): it is shown after the
// warnings that matter, at a low severity.
const ExpectedPrefix = "expected: "

// IsExpected reports whether warning w explains an expected effect (ExpectedPrefix).
func IsExpected(w string) bool { return strings.HasPrefix(w, ExpectedPrefix) }

// ID returns "benchmark/scenario".
func (s *Scenario) ID() string { return s.Benchmark + "/" + s.Scenario }

// Iterations counts calls made in the scenario.
type Iterations struct {
	Warmup   int `json:"warmup"`
	Measured int `json:"measured"`
	Failed   int `json:"failed"`
}

// IterationError is one failed iteration.
type IterationError struct {
	Iteration int    `json:"iteration"`
	Error     string `json:"error"`
}

// MaxIterationErrors bounds Scenario.Errors.
const MaxIterationErrors = 20

// Metric is one measured figure: a distribution (Summary, with raw Samples) or a single Value.
type Metric struct {
	Unit    string         `json:"unit"`
	Better  string         `json:"better"` // "lower" or "higher"
	Value   *float64       `json:"value,omitempty"`
	Summary *stats.Summary `json:"summary,omitempty"`
	Samples []float64      `json:"samples,omitempty"`
	Note    string         `json:"note,omitempty"`
}

// Center returns the metric's headline figure: its value, or the median of its distribution.
func (m Metric) Center() (float64, bool) {
	switch {
	case m.Value != nil:
		return *m.Value, true
	case m.Summary != nil:
		return m.Summary.Median, true
	}
	return 0, false
}

// Tally recomputes the run summary from the scenarios.
func (r *Run) Tally() {
	var s Summary
	for i := range r.Scenarios {
		s.count(&r.Scenarios[i])
	}
	s.rate()
	r.Summary = s
}

// count counts one scenario: its status, and its certificate's verdict.
func (s *Summary) count(sc *Scenario) {
	if c := sc.Extra.Certificate; c != nil {
		switch c.Verdict {
		case CertPass:
			s.Certificates.Pass++
		case CertWarn:
			s.Certificates.Warn++
		case CertFail:
			s.Certificates.Fail++
		}
	}
	s.Total++
	switch sc.Status {
	case StatusOK:
		s.Succeeded++
	case StatusFailed:
		s.Failed++
	case StatusSkipped:
		s.Skipped++
	}
}

// rate sets SuccessRate from the counts.
func (s *Summary) rate() {
	s.SuccessRate = 1
	if ran := s.Total - s.Skipped; ran > 0 {
		s.SuccessRate = float64(s.Succeeded) / float64(ran)
	}
}

// Declare sets the unit and better direction of a metric of the scenario, where the metric was
// produced (a definition's metrics: block, a worker's reply, a command's JSON line). Empty
// fields keep what the catalogue gave; a metric the scenario does not have is left alone. A
// direction other than higher or lower is an error.
func (s *Scenario) Declare(name, unit, better string) error {
	m, ok := s.Metrics[name]
	if !ok {
		return nil
	}
	if better != "" {
		d, err := ParseDirection(better)
		if err != nil {
			return fmt.Errorf("metric %s: %w", name, err)
		}
		m.Better = string(d)
	}
	if unit != "" {
		m.Unit = unit
	}
	s.Metrics[name] = m
	return nil
}
