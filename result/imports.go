package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/inferbench/inferbench/stats"
)

// pytestFile is the part of pytest-benchmark's JSON (--benchmark-json) that is read.
type pytestFile struct {
	MachineInfo map[string]any `json:"machine_info"`
	CommitInfo  struct {
		ID     string `json:"id"`
		Branch string `json:"branch"`
		Dirty  bool   `json:"dirty"`
	} `json:"commit_info"`
	Datetime   string `json:"datetime"`
	Benchmarks []struct {
		Group    string         `json:"group"`
		Name     string         `json:"name"`
		Fullname string         `json:"fullname"`
		Params   map[string]any `json:"params"`
		Stats    struct {
			Min, Max, Mean, Stddev, Median, Q1, Q3 float64
			Rounds                                 int
			Ops                                    float64
			Data                                   []float64 `json:"data"`
		} `json:"stats"`
	} `json:"benchmarks"`
}

// readPytestBenchmark reads pytest-benchmark's JSON into a run: each benchmark a scenario of the
// benchmark named by its group (or its name without parameters), times in milliseconds. The raw
// rounds are kept when the file has them (--benchmark-save-data); else the summary is used.
func readPytestBenchmark(rd io.Reader, name, id string) (*Run, error) {
	var f pytestFile
	if err := json.NewDecoder(rd).Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: not pytest-benchmark JSON: %w", name, err)
	}
	if len(f.Benchmarks) == 0 {
		return nil, fmt.Errorf("%s: no benchmarks (is this pytest --benchmark-json output?)", name)
	}
	at, _ := time.Parse(time.RFC3339Nano, f.Datetime)
	if at.IsZero() {
		at, _ = time.Parse("2006-01-02T15:04:05.999999", f.Datetime)
	}
	env := map[string]any{}
	for k, v := range f.MachineInfo {
		env["pytest_"+k] = v
	}
	if f.CommitInfo.ID != "" {
		env["git"] = map[string]any{"commit": f.CommitInfo.ID, "branch": f.CommitInfo.Branch, "dirty": f.CommitInfo.Dirty}
	}
	r := &Run{Schema: Schema, ID: id, StartedAt: at, FinishedAt: at, Environment: env, Config: Config{Args: []string{"import", name}}}
	for _, b := range f.Benchmarks {
		bench, sc := b.Group, b.Name
		base, params, _ := strings.Cut(b.Name, "[")
		if bench == "" {
			bench = base
			sc = strings.TrimSuffix(params, "]")
			if sc == "" {
				sc = "default"
			}
		}
		if b.Stats.Rounds < 0 {
			return nil, fmt.Errorf("%s: %s: rounds = %d cannot be negative", name, b.Fullname, b.Stats.Rounds)
		}
		var lat Metric
		if len(b.Stats.Data) >= 2 {
			xs := make([]float64, len(b.Stats.Data))
			for i, x := range b.Stats.Data {
				xs[i] = x * 1e3
			}
			if err := checkSamples("latency_ms", xs); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, b.Fullname, err)
			}
			lat = SampleMetric("latency_ms", xs)
		} else {
			lat = summaryMetric("latency_ms", b.Stats.Rounds, 1e3, b.Stats.Mean, b.Stats.Stddev, b.Stats.Min, b.Stats.Max, b.Stats.Median, b.Stats.Q1, b.Stats.Q3)
		}
		ms := map[string]Metric{"latency_ms": lat}
		if b.Stats.Ops > 0 {
			ops := b.Stats.Ops
			m := NewMetric("iterations_per_s")
			m.Value = &ops
			ms["iterations_per_s"] = m
		}
		r.Scenarios = append(r.Scenarios, Scenario{Benchmark: bench, Scenario: sc, Subject: "pytest-benchmark", Params: b.Params, Status: StatusOK, StartedAt: at,
			Iterations: Iterations{Measured: b.Stats.Rounds}, Metrics: ms, Source: b.Fullname})
	}
	if err := r.CheckValues(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r.Tally()
	return r, nil
}

// hyperfineFile is hyperfine's --export-json.
type hyperfineFile struct {
	Results []struct {
		Command    string            `json:"command"`
		Mean       float64           `json:"mean"`
		Stddev     float64           `json:"stddev"`
		Median     float64           `json:"median"`
		Min        float64           `json:"min"`
		Max        float64           `json:"max"`
		Times      []float64         `json:"times"`
		Parameters map[string]string `json:"parameters"`
	} `json:"results"`
}

// readHyperfine reads hyperfine's JSON (--export-json): each command a scenario of the benchmark
// bench, with its run times as latency samples in milliseconds.
func readHyperfine(rd io.Reader, name, id, bench string, at time.Time) (*Run, error) {
	var f hyperfineFile
	if err := json.NewDecoder(rd).Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: not hyperfine JSON: %w", name, err)
	}
	if len(f.Results) == 0 {
		return nil, fmt.Errorf("%s: no results (is this hyperfine --export-json output?)", name)
	}
	r := &Run{Schema: Schema, ID: id, StartedAt: at, FinishedAt: at, Environment: map[string]any{}, Config: Config{Args: []string{"import", name}}}
	for _, res := range f.Results {
		var lat Metric
		if len(res.Times) >= 2 {
			xs := make([]float64, len(res.Times))
			for i, x := range res.Times {
				xs[i] = x * 1e3
			}
			if err := checkSamples("latency_ms", xs); err != nil {
				return nil, fmt.Errorf("%s: command %q: %w", name, res.Command, err)
			}
			lat = SampleMetric("latency_ms", xs)
		} else {
			lat = summaryMetric("latency_ms", 1, 1e3, res.Mean, res.Stddev, res.Min, res.Max, res.Median, res.Median, res.Median)
		}
		var params map[string]any
		if len(res.Parameters) > 0 {
			params = map[string]any{}
			for k, v := range res.Parameters {
				params[k] = v
			}
		}
		r.Scenarios = append(r.Scenarios, Scenario{Benchmark: bench, Scenario: res.Command, Subject: "exec", Params: params, Status: StatusOK, StartedAt: at,
			Iterations: Iterations{Measured: len(res.Times)}, Metrics: map[string]Metric{"latency_ms": lat}})
	}
	if err := r.CheckValues(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r.Tally()
	return r, nil
}

func summaryMetric(name string, n int, scale, mean, std, lo, hi, median, q1, q3 float64) Metric {
	m := NewMetric(name)
	s := stats.Summary{N: n, Mean: mean * scale, Std: std * scale, Min: lo * scale, Max: hi * scale, Median: median * scale, P25: q1 * scale, P75: q3 * scale}
	if s.Mean != 0 {
		s.CV = s.Std / s.Mean
	}
	s.Warnings = []string{"imported summary without raw samples: percentiles beyond the quartiles are unknown"}
	m.Summary = &s
	return m
}

// importData reads the content of one file of another tool's results as a run (ImportFile).
func importData(data []byte, name, format, id, bench string, at time.Time) (*Run, error) {
	if format == "auto" {
		format = "gobench"
		if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
			var probe map[string]json.RawMessage
			if err := json.Unmarshal(t, &probe); err != nil {
				return nil, fmt.Errorf("%s: invalid JSON: %w", name, err)
			}
			switch {
			case probe["benchmarks"] != nil:
				format = "pytest"
			case probe["results"] != nil:
				format = "hyperfine"
			case probe["schema"] != nil:
				format = "inferbench"
			default:
				return nil, fmt.Errorf("%s: JSON of an unknown tool (want pytest-benchmark or hyperfine output; --format says which)", name)
			}
		}
	}
	var r *Run
	var err error
	switch format {
	case "gobench":
		r, err = readGoBench(bytes.NewReader(data), name, id, at)
	case "pytest":
		r, err = readPytestBenchmark(bytes.NewReader(data), name, id)
		if err == nil && r.StartedAt.IsZero() {
			r.StartedAt, r.FinishedAt = at, at
		}
	case "hyperfine":
		r, err = readHyperfine(bytes.NewReader(data), name, id, bench, at)
	case "inferbench":
		r, err = Decode(data, name)
	default:
		return nil, fmt.Errorf("--format %q: want auto, gobench, pytest, hyperfine or inferbench", format)
	}
	if err == nil {
		inertNames(r)
	}
	return r, err
}
