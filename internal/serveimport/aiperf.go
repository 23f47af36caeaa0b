package serveimport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// AIPerf writes its aggregates and its per-request records side by side in its artifact folder
// under these names; the file given is recognised by content, its sibling found by name.
var (
	aiperfJSONNames  = []string{"profile_export_aiperf.json", "profile_export.json"}
	aiperfJSONLNames = []string{"profile_export.jsonl"}
)

// aiperfSummaryLimit bounds the aggregates file (a few tens of kB in practice): it is decoded
// whole.
const aiperfSummaryLimit = 64 << 20

// aiperfStat is one of AIPerf's aggregates: a unit and statistics (avg, p50, ..., std).
type aiperfStat map[string]json.RawMessage

// aiperfSummary is profile_export_aiperf.json, the part read.
type aiperfSummary struct {
	Version string
	Command string
	Params  map[string]any
	Stats   map[string]map[string]float64 // metric → statistic → value, in its unit
	Units   map[string]string
}

// readAIPerf reads AIPerf's profile export: the aggregates (profile_export_aiperf.json) and the
// per-request records (profile_export.jsonl, a record a line), whichever was given and the
// other beside it when there. The records are read a line at a time.
func readAIPerf(path, name string, jsonl bool, ro readOpts) ([]result.Scenario, Origin, error) {
	sumPath, recPath := sibling(path, aiperfJSONNames), path
	if !jsonl {
		sumPath, recPath = path, sibling(path, aiperfJSONLNames)
	}
	var sum *aiperfSummary
	if sumPath != "" {
		s, err := readAIPerfSummary(sumPath)
		if err != nil {
			return nil, Origin{}, &FileError{File: nameOf(name, path, sumPath), Tool: AIPerf, Err: err}
		}
		sum = s
	}
	p := newPart("profile", ro.hists)
	o := Origin{Tool: AIPerf}
	if sum != nil {
		o.Version, o.Command = sum.Version, sum.Command
		p.aiperfAggregates(sum)
	}
	if recPath != "" {
		if err := p.aiperfRecords(recPath); err != nil {
			return nil, Origin{}, &FileError{File: nameOf(name, path, recPath), Tool: AIPerf, Where: err.where, Err: err.err}
		}
	}
	return []result.Scenario{p.scenario("aiperf-profile", o)}, o, nil
}

// sibling is the first of names beside path that exists (path itself excluded), "" for none.
func sibling(path string, names []string) string {
	for _, n := range names {
		s := filepath.Join(filepath.Dir(path), n)
		if fi, err := os.Stat(s); err == nil && fi.Mode().IsRegular() && filepath.Clean(s) != filepath.Clean(path) {
			return s
		}
	}
	return ""
}

// nameOf is the name a message gives the file at p: name when it is the file given, else its
// path beside it.
func nameOf(name, given, p string) string {
	if p == given {
		return name
	}
	return filepath.Join(filepath.Dir(name), filepath.Base(p))
}

func readAIPerfSummary(path string) (*aiperfSummary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(io.LimitReader(f, aiperfSummaryLimit)).Decode(&raw); err != nil {
		return nil, eof(err)
	}
	s := &aiperfSummary{Stats: map[string]map[string]float64{}, Units: map[string]string{}, Params: map[string]any{}}
	var schema string
	json.Unmarshal(raw["schema_version"], &schema)
	if !strings.HasPrefix(schema, "1.") {
		return nil, fmt.Errorf("key schema_version: %q, want 1.x (AIPerf 0.13)", schema)
	}
	json.Unmarshal(raw["aiperf_version"], &s.Version)
	var info struct {
		Command string `json:"cli_command"`
	}
	json.Unmarshal(raw["run_info"], &info)
	s.Command = info.Command
	var cfg struct {
		Phases []map[string]any `json:"phases"`
	}
	json.Unmarshal(raw["input_config"], &cfg)
	for _, ph := range cfg.Phases {
		if ph["kind"] == "profiling" {
			for _, k := range []string{"type", "concurrency", "request_rate", "requests"} {
				if v, ok := ph[k]; ok {
					s.Params[k] = v
				}
			}
		}
	}
	for k, v := range raw {
		var st map[string]any
		if json.Unmarshal(v, &st) != nil || st["unit"] == nil {
			continue
		}
		s.Units[k], _ = st["unit"].(string)
		s.Stats[k] = map[string]float64{}
		for sk, sv := range st {
			if x, ok := sv.(float64); ok {
				s.Stats[k][sk] = x
			}
		}
	}
	return s, nil
}

// aiperfMapped are AIPerf's metrics whose definition is inferbench's metric's, for a file
// without records: TTFT, request latency (to the last content response), and output tokens.
var aiperfMapped = map[string]string{"time_to_first_token": "ttft_ms", "request_latency": "e2e_ms"}

func (p *part) aiperfAggregates(s *aiperfSummary) {
	for k, v := range s.Params {
		p.params[k] = v
	}
	if t, ok := s.Params["type"].(string); ok {
		p.name = fmt.Sprintf("%s=%v", t, s.Params[t])
	}
	keys := make([]string, 0, len(s.Stats))
	for k := range s.Stats {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for sk, v := range s.Stats[k] {
			p.own[k+"."+sk] = v
		}
		if name, ok := aiperfMapped[k]; ok && s.Units[k] == "ms" {
			st := s.Stats[k]
			p.summaries[name] = stats.Summary{N: int(st["count"]), Mean: st["avg"], Std: st["std"], Min: st["min"], Max: st["max"], Median: st["p50"],
				P25: st["p25"], P75: st["p75"], P90: st["p90"], P95: st["p95"], P99: st["p99"]}
		}
	}
	if v, ok := s.Stats["request_throughput"]["avg"]; ok {
		p.values["requests_per_s"] = v
	}
	if v, ok := s.Stats["output_token_throughput"]["avg"]; ok {
		p.values["output_tokens_per_s"] = v
	}
}

// aiperfRecord is one line of profile_export.jsonl.
type aiperfRecord struct {
	Metadata struct {
		Start     int64  `json:"request_start_ns"`
		End       int64  `json:"request_end_ns"`
		Phase     string `json:"benchmark_phase"`
		Cancelled bool   `json:"was_cancelled"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
		Unit  string          `json:"unit"`
	} `json:"metrics"`
	Error json.RawMessage `json:"error"`
}

// recordErr is where in the records an error is, and what.
type recordErr struct {
	where string
	err   error
}

// aiperfLineLimit bounds one record (one request's chunk gaps: a few kB in practice).
const aiperfLineLimit = 64 << 20

// aiperfRecords reads the per-request records a line at a time; the warm-up's are left out.
func (p *part) aiperfRecords(path string) *recordErr {
	f, err := os.Open(path)
	if err != nil {
		return &recordErr{err: err}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), aiperfLineLimit)
	line := 0
	for sc.Scan() {
		line++
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var rec aiperfRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return &recordErr{fmt.Sprintf("line %d", line), err}
		}
		if rec.Metadata.Phase != "" && rec.Metadata.Phase != "profiling" {
			continue
		}
		r, err := rec.request()
		if err == nil {
			err = p.add(r)
		}
		if err != nil {
			return &recordErr{fmt.Sprintf("line %d", line), err}
		}
	}
	if err := sc.Err(); err != nil {
		return &recordErr{fmt.Sprintf("line %d", line+1), err}
	}
	return nil
}

// request is the record as a request: chunks at the TTFT and after each inter-chunk gap.
func (rec *aiperfRecord) request() (Request, error) {
	if rec.Metadata.Start <= 0 {
		return Request{}, fmt.Errorf("key metadata.request_start_ns: missing")
	}
	r := Request{Start: time.Unix(0, rec.Metadata.Start)}
	if rec.Metadata.End > rec.Metadata.Start {
		r.End = time.Duration(rec.Metadata.End - rec.Metadata.Start)
	}
	if len(rec.Error) > 0 && string(rec.Error) != "null" {
		var e struct {
			Type, Message string
		}
		json.Unmarshal(rec.Error, &e)
		r.Err = strings.TrimSpace(e.Type + ": " + e.Message)
		return r, nil
	}
	if rec.Metadata.Cancelled {
		r.Err = "cancelled"
		return r, nil
	}
	num := func(k string) (float64, bool, error) {
		m, ok := rec.Metrics[k]
		if !ok {
			return 0, false, nil
		}
		var x float64
		if err := json.Unmarshal(m.Value, &x); err != nil {
			return 0, false, fmt.Errorf("key metrics.%s.value: %w", k, err)
		}
		return x * unitScale(m.Unit), true, nil
	}
	ttft, streamed, err := num("time_to_first_token")
	if err != nil {
		return r, err
	}
	lat, _, err := num("request_latency")
	if err != nil {
		return r, err
	}
	for _, k := range []string{"usage_completion_tokens", "output_sequence_length"} {
		if v, ok, _ := num(k); ok && r.OutputTokens == 0 {
			r.OutputTokens = int(v)
		}
	}
	for _, k := range []string{"usage_prompt_tokens", "input_sequence_length"} {
		if v, ok, _ := num(k); ok && r.InputTokens == 0 {
			r.InputTokens = int(v)
		}
	}
	r.LastToken = time.Duration(lat)
	if r.End == 0 {
		r.End = r.LastToken
	}
	if !streamed {
		return r, nil
	}
	r.FirstToken = time.Duration(ttft)
	r.Chunks = []time.Duration{r.FirstToken}
	if m, ok := rec.Metrics["inter_chunk_latency"]; ok {
		var gaps []float64
		if err := json.Unmarshal(m.Value, &gaps); err != nil {
			return r, fmt.Errorf("key metrics.inter_chunk_latency.value: %w", err)
		}
		at := ttft
		for _, g := range gaps {
			at += g * unitScale(m.Unit)
			r.Chunks = append(r.Chunks, time.Duration(at))
		}
	}
	return r, nil
}

// unitScale is how many nanoseconds one of AIPerf's time unit is (1 for a count).
func unitScale(u string) float64 {
	switch u {
	case "ms":
		return 1e6
	case "us":
		return 1e3
	case "s", "sec":
		return 1e9
	}
	return 1
}
