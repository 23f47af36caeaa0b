// Package tracker sends a run's results to the experiment tracker a team already uses
// (`inferbench export --format mlflow|wandb`, `inferbench run --export`): MLflow over its REST
// API, Weights & Biases through the user's own wandb Python package. Both read one Payload,
// derived once from the run (From): the run's tags and files, and per scenario its params, its
// metrics and the step series of its time slices. docs/trackers.md lists what goes where.
package tracker

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferbench/inferbench/result"
)

// Payload is what a tracker receives of one inferbench run.
type Payload struct {
	RunID string `json:"run_id"`
	// Status is "ok", "failed" (a scenario failed) or "partial" (the run was interrupted).
	Status     string    `json:"status"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Tags describe the run: its id, the inferbench version, git, host, status, verdict.
	Tags map[string]string `json:"tags"`
	// Artifacts are the run folder's files sent along (run.json, report.html, summary.csv).
	Artifacts []Artifact `json:"artifacts"`
	Scenarios []Scenario `json:"scenarios"`
	// Warnings say what could not be sent (no run folder: no artifacts; a metric's name a
	// tracker refuses).
	Warnings []string `json:"warnings,omitempty"`
}

// Artifact is a file of the run folder.
type Artifact struct {
	Name string `json:"name"` // the file's name in the run folder and in the tracker
	Path string `json:"path"` // where it is on this machine
}

// Scenario is one scenario of the run, as a tracker's run of its own.
type Scenario struct {
	ID        string            `json:"id"`     // benchmark/scenario
	Status    string            `json:"status"` // ok, failed or skipped
	StartedAt time.Time         `json:"started_at,omitzero"`
	DurationS float64           `json:"duration_s"`
	Tags      []string          `json:"tags,omitempty"`
	Params    map[string]string `json:"params"`
	// Metrics are the scenario's figures: a value's metric under its name, a distribution's
	// mean, p50, p90 and p99 as NAME.mean, NAME.p50, ... (docs/metrics.md).
	Metrics map[string]float64 `json:"metrics"`
	// Steps are the serving load's time slices (run.json's extra.slices), one step each.
	Steps []Step `json:"steps,omitempty"`
}

// Step is one time slice of a serving scenario: its figures under slices/NAME.
type Step struct {
	Step    int                `json:"step"`
	StartS  float64            `json:"start_s"` // the slice's start, s from the start of measurement
	Metrics map[string]float64 `json:"metrics"`
}

// Options say what From adds beyond the run itself.
type Options struct {
	// Dir is the run folder, whose run.json, report.html and summary.csv are sent as artifacts
	// ("" for a run found only in the history store: none are sent).
	Dir string
	// Verdict is the run's verdict when it is known ("pass", "regression"), tagged
	// inferbench.verdict.
	Verdict string
}

// The trackers, as --format and --export name them.
const (
	MLflow = "mlflow"
	Wandb  = "wandb"
)

// ArtifactFiles are the files of a run folder sent as artifacts, when present.
var ArtifactFiles = []string{result.RunFile, "report.html", "summary.csv"}

// Summary statistics exported for a distribution, and the field of stats.Summary each reads.
var distStats = []string{"mean", "p50", "p90", "p99"}

// SlicePrefix starts the names of the step series of time slices: slices/ttft_ms.p99.
const SlicePrefix = "slices/"

// From derives the payload of run r.
func From(r *result.Run, o Options) *Payload {
	p := &Payload{RunID: r.ID, Status: RunStatus(r), StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		Tags: map[string]string{"inferbench.run_id": r.ID, "inferbench.status": RunStatus(r)}}
	env := r.Environment
	setTag := func(k string, v any) {
		if v == nil {
			return
		}
		if s := fmt.Sprint(v); s != "" {
			p.Tags[k] = s
		}
	}
	setTag("inferbench.version", result.EnvValue(env, "inferbench"))
	setTag("host", result.EnvValue(env, "hostname"))
	setTag("git.commit", result.EnvValue(env, "git", "commit"))
	setTag("git.branch", result.EnvValue(env, "git", "branch"))
	setTag("git.dirty", result.EnvValue(env, "git", "dirty"))
	if o.Verdict != "" {
		p.Tags["inferbench.verdict"] = o.Verdict
	}
	p.Tags["inferbench.scenarios"] = fmt.Sprintf("%d total, %d succeeded, %d failed, %d skipped",
		r.Summary.Total, r.Summary.Succeeded, r.Summary.Failed, r.Summary.Skipped)
	if o.Dir == "" {
		p.Warnings = append(p.Warnings, "the run has no run folder here (found in the history store): no artifacts sent")
	}
	for _, name := range ArtifactFiles {
		if o.Dir == "" {
			break
		}
		path := filepath.Join(o.Dir, name)
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
			p.Artifacts = append(p.Artifacts, Artifact{Name: name, Path: path})
		}
	}
	for i := range r.Scenarios {
		p.Scenarios = append(p.Scenarios, scenario(&r.Scenarios[i], &p.Warnings))
	}
	return p
}

// RunStatus is "partial" for an interrupted run, "failed" when a scenario failed, else "ok".
func RunStatus(r *result.Run) string {
	switch {
	case r.Partial:
		return "partial"
	case r.Summary.Failed > 0:
		return "failed"
	}
	return "ok"
}

func scenario(s *result.Scenario, warnings *[]string) Scenario {
	sc := Scenario{ID: s.ID(), Status: s.Status, StartedAt: s.StartedAt, DurationS: s.DurationS, Tags: s.Tags, Params: map[string]string{
		"benchmark": s.Benchmark, "scenario": s.Scenario, "subject": s.Subject}, Metrics: map[string]float64{}}
	if s.Model != "" {
		sc.Params["model"] = s.Model
	}
	if s.Category != "" {
		sc.Params["category"] = s.Category
	}
	for k, v := range s.Params { // the matrix: batch_size, dtype, concurrency, rate, ...
		if _, taken := sc.Params[k]; !taken {
			sc.Params[k] = paramValue(v)
		}
	}
	add := func(name string, v float64) {
		if !ValidName(name) {
			*warnings = append(*warnings, fmt.Sprintf("%s: metric %q not sent: a tracker takes letters, digits, _ - . / and space", sc.ID, name))
			return
		}
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			sc.Metrics[name] = v
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Metrics)) {
		m := s.Metrics[name]
		switch {
		case m.Value != nil:
			add(name, *m.Value)
		case m.Summary != nil:
			x := m.Summary
			for i, v := range []float64{x.Mean, x.Median, x.P90, x.P99} {
				add(name+"."+distStats[i], v)
			}
		}
	}
	sc.Steps = steps(s)
	return sc
}

// paramValue writes a matrix value as text: a number as Go prints it, anything else as JSON.
func paramValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// steps returns the scenario's time slices as steps: slices/requests_per_s and
// slices/ttft_ms.p50 and the other quantiles of each slice.
func steps(s *result.Scenario) []Step {
	sl := s.Extra.Slices
	if sl == nil {
		return nil
	}
	out := make([]Step, 0, len(sl))
	for i, x := range sl {
		st := Step{Step: i, StartS: x.StartS, Metrics: map[string]float64{}}
		st.Metrics[SlicePrefix+"requests_per_s"] = x.RPS
		for q, v := range x.Quantiles {
			if ValidName(q) && !math.IsNaN(v) && !math.IsInf(v, 0) {
				st.Metrics[SlicePrefix+q] = v
			}
		}
		out = append(out, st)
	}
	return out
}

// ValidName reports whether both trackers take name as a metric's or param's key: MLflow's
// rule (letters, digits, _ - . / and space, at most 250 characters; no "..", no leading "/").
func ValidName(name string) bool {
	if name == "" || len(name) > 250 || strings.Contains(name, "..") || strings.HasPrefix(name, "/") {
		return false
	}
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune("_-./ ", c):
		default:
			return false
		}
	}
	return true
}
