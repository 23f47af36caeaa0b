package serveimport

import (
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// llmdLimit bounds an llm-d benchmark report: aggregates (and optional time series), decoded
// whole.
const llmdLimit = 64 << 20

// llmdVersions are the benchmark report schema versions read (llm-d-benchmark's
// benchmark_report, br_v0_2 and br_v0_2_1: the same results layout).
var llmdVersions = []string{"0.2", "0.2.1"}

// llmdStat is one aggregate of a report: units and statistics (mean, p50, p99, stddev, ...).
type llmdStat map[string]any

type llmdReport struct {
	Version string `yaml:"version" json:"version"`
	Run     struct {
		UID  string `yaml:"uid" json:"uid"`
		Time struct {
			Start string `yaml:"start" json:"start"`
			End   string `yaml:"end" json:"end"`
		} `yaml:"time" json:"time"`
	} `yaml:"run" json:"run"`
	Scenario struct {
		Load struct {
			Standardized map[string]any `yaml:"standardized" json:"standardized"`
		} `yaml:"load" json:"load"`
	} `yaml:"scenario" json:"scenario"`
	Results struct {
		RequestPerformance struct {
			Aggregate struct {
				Requests   map[string]any      `yaml:"requests" json:"requests"`
				Latency    map[string]llmdStat `yaml:"latency" json:"latency"`
				Throughput map[string]llmdStat `yaml:"throughput" json:"throughput"`
			} `yaml:"aggregate" json:"aggregate"`
		} `yaml:"request_performance" json:"request_performance"`
	} `yaml:"results" json:"results"`
}

// readLLMD reads an llm-d benchmark report (YAML or JSON, which YAML reads too). It holds the
// aggregates its converter computed from another tool's results, never the requests: the
// scenario's metrics are the aggregates whose definitions are inferbench's (TTFT, request
// latency, request and output token rates); the others are kept under the report's names.
func readLLMD(path, name string, _ bool, ro readOpts) ([]result.Scenario, Origin, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Origin{}, err
	}
	defer f.Close()
	fail := func(where string, err error) ([]result.Scenario, Origin, error) {
		return nil, Origin{}, &FileError{File: name, Tool: LLMD, Where: where, Err: err}
	}
	data, err := io.ReadAll(io.LimitReader(f, llmdLimit+1))
	if err != nil {
		return nil, Origin{}, err
	}
	if len(data) > llmdLimit {
		return fail("", fmt.Errorf("larger than %d MiB: not a benchmark report", llmdLimit>>20))
	}
	var br llmdReport
	if err := yaml.Unmarshal(data, &br); err != nil {
		return fail("", fmt.Errorf("%s", yaml.FormatError(err, false, true)))
	}
	known := false
	for _, v := range llmdVersions {
		known = known || br.Version == v
	}
	if !known {
		return fail("key version", fmt.Errorf("%q, want %s (llm-d-benchmark's benchmark report schema)", br.Version, strings.Join(llmdVersions, " or ")))
	}
	agg := br.Results.RequestPerformance.Aggregate
	if agg.Latency == nil && agg.Throughput == nil {
		return fail("key results.request_performance.aggregate", fmt.Errorf("missing: no aggregate to import"))
	}
	load := br.Scenario.Load.Standardized
	o := Origin{Tool: LLMD, Version: "benchmark report " + br.Version}
	if tool, _ := load["tool"].(string); tool != "" {
		o.Producer = tool
		if v, _ := load["tool_version"].(string); v != "" {
			o.Producer += " " + v
		}
	}
	p := newPart("report", false) // aggregates only: no request to keep
	p.llmdLoad(load)
	if err := p.llmdAggregates(agg.Latency, agg.Throughput, agg.Requests); err != nil {
		return fail("key results.request_performance.aggregate", err)
	}
	sc := p.scenario("llm-d", o)
	sc.StartedAt = llmdTime(br.Run.Time.Start, llmdTime(br.Run.Time.End, ro.at))
	if o.Producer != "" {
		sc.Warnings = append(sc.Warnings, "an llm-d report of "+o.Producer+": its inter_token_latency and time_per_output_token are that tool's definitions (docs/import.md)")
	}
	return []result.Scenario{sc}, o, nil
}

func llmdTime(s string, def time.Time) time.Time {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t
	}
	return def
}

// llmdLoad keeps the load's parameters (rate and concurrency) and names the scenario by them.
func (p *part) llmdLoad(load map[string]any) {
	for _, k := range []string{"rate_qps", "concurrency", "stage"} {
		v, ok := load[k]
		if !ok || v == nil {
			continue
		}
		if x, ok := v.(float64); ok && math.IsInf(x, 0) {
			v = "inf"
		}
		p.params[k] = v
	}
	p.name = fmt.Sprintf("rate=%v,concurrency=%v", orNone(p.params["rate_qps"]), orNone(p.params["concurrency"]))
}

// llmdMapped are the report's aggregates whose definitions are inferbench's metric's.
var llmdMapped = map[string]string{"time_to_first_token": "ttft_ms", "request_latency": "e2e_ms"}

func (p *part) llmdAggregates(lat, thr map[string]llmdStat, reqs map[string]any) error {
	n := 0
	if x, ok := reqs["total"].(uint64); ok {
		n = int(x)
	}
	names := make([]string, 0, len(lat))
	for k := range lat {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		st, err := llmdNumbers(lat[k], "latency."+k)
		if err != nil {
			return err
		}
		for sk, v := range st {
			p.own["latency."+k+"."+sk] = v
		}
		if m, ok := llmdMapped[k]; ok {
			scale, err := llmdToMS(lat[k]["units"])
			if err != nil {
				return fmt.Errorf("latency.%s.units: %w", k, err)
			}
			p.summaries[m] = stats.Summary{N: n, Mean: st["mean"] * scale, Std: st["stddev"] * scale, Min: st["min"] * scale, Max: st["max"] * scale,
				Median: st["p50"] * scale, P25: st["p25"] * scale, P75: st["p75"] * scale, P90: st["p90"] * scale, P95: st["p95"] * scale, P99: st["p99"] * scale}
		}
	}
	for k, s := range thr {
		st, err := llmdNumbers(s, "throughput."+k)
		if err != nil {
			return err
		}
		for sk, v := range st {
			p.own["throughput."+k+"."+sk] = v
		}
	}
	if v, ok := p.own["throughput.request_rate.mean"]; ok {
		p.values["requests_per_s"] = v
	}
	if v, ok := p.own["throughput.output_token_rate.mean"]; ok {
		p.values["output_tokens_per_s"] = v
	}
	for k, v := range reqs {
		if x, ok := toFloat(v); ok {
			p.own["requests."+k] = x
		}
	}
	return nil
}

// llmdNumbers are the numeric statistics of one aggregate.
func llmdNumbers(s llmdStat, key string) (map[string]float64, error) {
	out := map[string]float64{}
	for k, v := range s {
		if k == "units" {
			continue
		}
		x, ok := toFloat(v)
		if !ok {
			return nil, fmt.Errorf("%s.%s: %v is not a number", key, k, v)
		}
		out[k] = x
	}
	return out, nil
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case uint64:
		return float64(x), true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	}
	return 0, false
}

// llmdToMS is the factor from a latency's units to milliseconds.
func llmdToMS(u any) (float64, error) {
	s, _ := u.(string)
	switch strings.SplitN(s, "/", 2)[0] {
	case "ms":
		return 1, nil
	case "s":
		return 1e3, nil
	case "us":
		return 1e-3, nil
	}
	return 0, fmt.Errorf("%q, want s or ms", s)
}
