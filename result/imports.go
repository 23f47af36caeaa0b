package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/stats"
)

// pytestBench is one benchmark of pytest-benchmark's JSON (--benchmark-json), the part that is
// read: its "benchmarks" array's elements are decoded one at a time.
type pytestBench struct {
	Group    string         `json:"group"`
	Name     string         `json:"name"`
	Fullname string         `json:"fullname"`
	Params   map[string]any `json:"params"`
	// ExtraInfo is what the test put in benchmark.extra_info: kept as the scenario's extra
	// section "extra_info".
	ExtraInfo map[string]any `json:"extra_info"`
	Stats     struct {
		Min, Max, Mean, Stddev, Median, Q1, Q3 float64
		Rounds                                 int
		Ops                                    float64
		Data                                   []float64 `json:"data"`
	} `json:"stats"`
}

// errOtherTool is readPytest's answer, when sniffing, for the JSON of another tool (a key
// "results" or "schema" before any "benchmarks"): the caller reads it whole.
var errOtherTool = errors.New("not pytest-benchmark JSON")

// readPytestBenchmark reads pytest-benchmark's JSON into a run: each benchmark a scenario of the
// benchmark named by its group (or its name without parameters), times in milliseconds. The raw
// rounds are kept when the file has them (--benchmark-save-data); else the summary is used.
func readPytestBenchmark(rd io.Reader, name, id string) (*Run, error) {
	return readPytest(rd, name, id, false)
}

// readPytest is readPytestBenchmark as a stream: the document's tokens are read one by one and
// each element of its "benchmarks" array is decoded and made a scenario on its own, so that what
// is held is the run being made (its samples), never the file or a decoded copy of it (a 1 GB
// file read whole and decoded twice took 4.46 GB). With sniff, a document whose first deciding
// key is another tool's ("results": hyperfine, "schema": inferbench) returns errOtherTool.
func readPytest(rd io.Reader, name, id string, sniff bool) (*Run, error) {
	dec := json.NewDecoder(rd)
	bad := func(err error) (*Run, error) {
		return nil, fmt.Errorf("%s: not pytest-benchmark JSON: %w", name, unexpectedEOF(err))
	}
	if t, err := dec.Token(); err != nil {
		return bad(err)
	} else if t != json.Delim('{') {
		return bad(fmt.Errorf("a document that is not an object (%v)", t))
	}
	var machine map[string]any
	var commit struct {
		ID     string `json:"id"`
		Branch string `json:"branch"`
		Dirty  bool   `json:"dirty"`
	}
	var datetime string
	var scs []Scenario
	found := false // a "benchmarks" key
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return bad(err)
		}
		key, _ := t.(string)
		switch {
		case strings.EqualFold(key, "benchmarks"):
			found, scs = true, nil // a second "benchmarks" replaces the first, as encoding/json does
			if scs, err = pytestBenchmarks(dec, name); err != nil {
				return nil, err
			}
		case strings.EqualFold(key, "machine_info"):
			machine = nil
			err = dec.Decode(&machine)
		case strings.EqualFold(key, "commit_info"):
			err = dec.Decode(&commit)
		case strings.EqualFold(key, "datetime"):
			err = dec.Decode(&datetime)
		case sniff && !found && (key == "results" || key == "schema"):
			return nil, errOtherTool
		default:
			err = finite.SkipValue(dec)
		}
		if err != nil {
			return bad(err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return bad(err)
	}
	if sniff && !found {
		return nil, errOtherTool
	}
	if len(scs) == 0 {
		return nil, fmt.Errorf("%s: no benchmarks (is this pytest --benchmark-json output?)", name)
	}
	at, _ := time.Parse(time.RFC3339Nano, datetime)
	if at.IsZero() {
		at, _ = time.Parse("2006-01-02T15:04:05.999999", datetime)
	}
	env := map[string]any{}
	for k, v := range machine {
		env["pytest_"+k] = v
	}
	if commit.ID != "" {
		env["git"] = map[string]any{"commit": commit.ID, "branch": commit.Branch, "dirty": commit.Dirty}
	}
	for i := range scs {
		scs[i].StartedAt = at
	}
	distinguish(scs)
	r := &Run{Schema: Schema, ID: id, StartedAt: at, FinishedAt: at, Environment: env, Config: Config{Args: []string{"import", name}}, Scenarios: scs}
	if err := r.CheckValues(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r.Tally()
	return r, nil
}

// pytestBenchmarks reads the value of "benchmarks" (an array, or null) an element at a time.
func pytestBenchmarks(dec *json.Decoder, name string) ([]Scenario, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%s: not pytest-benchmark JSON: %w", name, unexpectedEOF(err))
	}
	if t == nil {
		return nil, nil
	}
	if t != json.Delim('[') {
		return nil, fmt.Errorf("%s: not pytest-benchmark JSON: \"benchmarks\" is %v, want an array", name, t)
	}
	var scs []Scenario
	for dec.More() {
		var b pytestBench
		if err := dec.Decode(&b); err != nil {
			return nil, fmt.Errorf("%s: not pytest-benchmark JSON: benchmark %d: %w", name, len(scs)+1, unexpectedEOF(err))
		}
		sc, err := b.scenario(name)
		if err != nil {
			return nil, err
		}
		scs = append(scs, sc)
	}
	if _, err := dec.Token(); err != nil { // the closing bracket
		return nil, fmt.Errorf("%s: not pytest-benchmark JSON: %w", name, unexpectedEOF(err))
	}
	return scs, nil
}

// scenario turns one benchmark into a scenario (its StartedAt is the file's datetime, set
// after: it may come after the benchmarks).
func (b *pytestBench) scenario(name string) (Scenario, error) {
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
		return Scenario{}, fmt.Errorf("%s: %s: rounds = %d cannot be negative", name, b.Fullname, b.Stats.Rounds)
	}
	var lat Metric
	if len(b.Stats.Data) >= 2 {
		xs := b.Stats.Data // decoded for this benchmark alone: scaled in place
		for i, x := range xs {
			xs[i] = x * 1e3
		}
		if err := checkSamples("latency_ms", xs); err != nil {
			return Scenario{}, fmt.Errorf("%s: %s: %w", name, b.Fullname, err)
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
	s := Scenario{Benchmark: bench, Scenario: sc, Subject: "pytest-benchmark", Params: b.Params, Status: StatusOK,
		Iterations: Iterations{Measured: b.Stats.Rounds}, Metrics: ms, Source: b.Fullname}
	if len(b.ExtraInfo) > 0 {
		raw, err := json.Marshal(b.ExtraInfo)
		if err != nil {
			return Scenario{}, fmt.Errorf("%s: %s: extra_info: %w", name, b.Fullname, err)
		}
		s.Extra.Other = map[string]json.RawMessage{"extra_info": raw}
	}
	return s, nil
}

// distinguish gives each pytest test a matching key of its own: two tests of one name and
// parameters in different modules (tests/a.py::test_x[1], tests/b.py::test_x[1]), or two tests
// of one group parametrized alike (group "parse": test_a[1], test_b[1]), would be one benchmark
// and one set of parameters, which compare matches as one scenario (compare.Key). Each of those
// is named by its full name without the parameters (tests/a.py::test_x) instead.
func distinguish(scs []Scenario) {
	key := func(s *Scenario) string { // compare.Key's rule
		if len(s.Params) == 0 {
			return s.Benchmark + "\x00" + s.Scenario
		}
		p, _ := json.Marshal(s.Params) // map keys sorted: one text for one set of parameters
		return s.Benchmark + "\x00" + string(p)
	}
	sources := map[string]map[string]bool{}
	for i := range scs {
		k := key(&scs[i])
		if sources[k] == nil {
			sources[k] = map[string]bool{}
		}
		sources[k][scs[i].Source] = true
	}
	for i := range scs {
		s := &scs[i]
		if len(sources[key(s)]) > 1 && s.Source != "" {
			s.Benchmark, _, _ = strings.Cut(s.Source, "[")
		}
	}
}

// unexpectedEOF is err, io.ErrUnexpectedEOF for the end of a document cut short.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
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
				return nil, fmt.Errorf("%s: JSON of an unknown tool (want pytest-benchmark or hyperfine output, an inferbench run.json, or a serving tool's results: vLLM bench serve --save-result, AIPerf profile_export_aiperf.json or profile_export.jsonl, guidellm benchmarks.json, an llm-d benchmark report v0.2; --format says which)", name)
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
		return nil, fmt.Errorf("--format %q: want auto, gobench, pytest, hyperfine, inferbench, vllm, aiperf, guidellm or llm-d", format)
	}
	if err == nil {
		inertNames(r)
	}
	return r, err
}
