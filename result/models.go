package result

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/atomicfile"
	"github.com/inferbench/inferbench/internal/base/finite"
)

// The layout LLM benchmark scripts write: a file per model and one summary of the run, beside
// run.json.
const (
	// modelsDir holds models/<model>.json: a run.json (schema inferbench/run/v1) with only that
	// model's scenarios and without raw samples, which stay in run.json.
	modelsDir = "models"
	// benchmarkSummaryFile holds each model's scenarios with their status and headline metrics.
	benchmarkSummaryFile = "benchmark_summary.json"
	// benchmarkSummarySchema identifies the version of benchmark_summary.json.
	benchmarkSummarySchema = "inferbench/benchmark-summary/v1"
)

// Note: the per-model files are views of run.json, not a second record: they are rewritten with
// it (Save), keep its schema so that every reader of run.json reads them (report, compare,
// import), and leave the samples out, so that they add summaries, not a copy of the run.
// An export command that wrote them on request was rejected: users of such scripts look for them in
// the results folder after a run.

// benchmarkSummary is benchmark_summary.json: per model, its scenarios' status and headline
// metrics (Primary), summaries without samples.
type benchmarkSummary struct {
	Schema     string         `json:"schema"`
	RunID      string         `json:"run_id"`
	Partial    bool           `json:"partial"`
	StartedAt  time.Time      `json:"started_at"`
	FinishedAt time.Time      `json:"finished_at,omitzero"`
	Summary    Summary        `json:"summary"`
	Models     []modelSummary `json:"models"`
}

// modelSummary is one model's part of benchmarkSummary. Scenarios without a model are listed
// under the model "", with no file.
type modelSummary struct {
	Model     string            `json:"model"`
	File      string            `json:"file,omitempty"` // models/<model>.json, relative to the run folder
	Summary   Summary           `json:"summary"`
	Scenarios []scenarioSummary `json:"scenarios"`
}

// scenarioSummary is one scenario in benchmarkSummary.
type scenarioSummary struct {
	Benchmark  string            `json:"benchmark"`
	Scenario   string            `json:"scenario"`
	Status     string            `json:"status"`
	Error      string            `json:"error,omitempty"`
	SkipReason string            `json:"skip_reason,omitempty"`
	Metrics    map[string]Metric `json:"metrics,omitempty"`
}

// modelFile returns the path of a model's file inside a run folder, relative to it: models/ and
// the model's name made a safe file name ("meta-llama/Llama-2-7b" →
// models/meta-llama__Llama-2-7b~8291f529.json). A name that is not kept as it is (a byte outside
// [A-Za-z0-9._=,+-], an upper-case letter, "/", "__") ends with "~" and eight hex digits of its
// SHA-256, so that two models never share a file, on case-folding file systems too.
func modelFile(model string) string {
	var b strings.Builder
	lossy := strings.Contains(model, "__") || strings.Trim(model, ".") == ""
	for i := 0; i < len(model); i++ {
		switch c := model[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', strings.IndexByte("._=,+-", c) >= 0:
			b.WriteByte(c)
		case c == '/':
			b.WriteString("__")
			lossy = true
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c)
			lossy = true
		default:
			b.WriteByte('_')
			lossy = true
		}
	}
	name := b.String()
	if len(name) > 120 {
		name, lossy = name[:111], true
	}
	if lossy {
		sum := sha256.Sum256([]byte(model))
		name += "~" + hex.EncodeToString(sum[:4])
	}
	return modelsDir + "/" + name + ".json"
}

// summarize returns r's benchmarkSummary: its models in the order their first scenario ran.
func summarize(r *Run) *benchmarkSummary {
	bs := &benchmarkSummary{Schema: benchmarkSummarySchema, RunID: r.ID, Partial: r.Partial,
		StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, Summary: r.Summary, Models: []modelSummary{}}
	for _, m := range models(r) {
		ms := modelSummary{Model: m.name, Summary: m.run.Summary}
		if m.name != "" {
			ms.File = modelFile(m.name)
		}
		for i := range m.run.Scenarios {
			s := &m.run.Scenarios[i]
			ss := scenarioSummary{Benchmark: s.Benchmark, Scenario: s.Scenario, Status: s.Status, Error: s.Error, SkipReason: s.SkipReason}
			for name, met := range s.Metrics {
				if Primary(name) {
					if ss.Metrics == nil {
						ss.Metrics = map[string]Metric{}
					}
					ss.Metrics[name] = met
				}
			}
			ms.Scenarios = append(ms.Scenarios, ss)
		}
		bs.Models = append(bs.Models, ms)
	}
	return bs
}

type modelRun struct {
	name string
	run  *Run
}

// models splits r by model: each part a copy of r with that model's scenarios, samples left out.
func models(r *Run) []modelRun {
	var out []modelRun
	for i := range r.Scenarios {
		s := r.Scenarios[i]
		j := slices.IndexFunc(out, func(m modelRun) bool { return m.name == s.Model })
		if j < 0 {
			part := *r
			part.Scenarios = nil
			out, j = append(out, modelRun{s.Model, &part}), len(out)
		}
		if len(s.Metrics) > 0 {
			ms := make(map[string]Metric, len(s.Metrics))
			for name, m := range s.Metrics {
				m.Samples = nil
				ms[name] = m
			}
			s.Metrics = ms
		}
		out[j].run.Scenarios = append(out[j].run.Scenarios, s)
	}
	for _, m := range out {
		m.run.Tally()
	}
	return out
}

// saveModels writes models/<model>.json for each model of r and benchmark_summary.json into dir.
func saveModels(dir string, r *Run) error {
	for _, m := range models(r) {
		if m.name == "" {
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(modelFile(m.name)))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := atomicfile.Write(path, func(w io.Writer) error { return WriteJSON(w, m.run) }); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	path := filepath.Join(dir, benchmarkSummaryFile)
	err := atomicfile.Write(path, func(w io.Writer) error {
		enc := finite.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(summarize(r))
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
