package serveimport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/inferbench/inferbench/result"
)

// guidellmSchema is the version of guidellm's benchmarks.json read (metadata.version: guidellm
// 0.8's).
const guidellmSchema = 2

// guidellmRequest is one request of a benchmark's "requests" (GenerativeRequestStats): guidellm
// keeps the first and last token's times and the count of token iterations, not every chunk.
type guidellmRequest struct {
	Info struct {
		Status  string  `json:"status"`
		Error   *string `json:"error"`
		Timings struct {
			Start      *float64 `json:"request_start"`
			FirstToken *float64 `json:"first_token_iteration"`
			LastToken  *float64 `json:"last_token_iteration"`
			End        *float64 `json:"request_end"`
		} `json:"timings"`
	} `json:"info"`
	PromptTokens *int `json:"prompt_tokens"`
	OutputTokens *int `json:"output_tokens"`
}

// readGuideLLM reads guidellm's benchmarks.json (--output kind=json) as a stream: each element
// of "benchmarks" a scenario, each of its requests decoded and added on its own.
func readGuideLLM(path, name string, _ bool, ro readOpts) ([]result.Scenario, Origin, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Origin{}, err
	}
	defer f.Close()
	o := Origin{Tool: GuideLLM}
	fail := func(where string, err error) ([]result.Scenario, Origin, error) {
		return nil, o, &FileError{File: name, Tool: GuideLLM, Where: where, Err: err}
	}
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<16))
	if err := expect(dec, '{'); err != nil {
		return fail("", err)
	}
	var scs []result.Scenario
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fail("", eof(err))
		}
		switch key, _ := t.(string); key {
		case "metadata":
			var md struct {
				Version int    `json:"version"`
				Tool    string `json:"guidellm_version"`
			}
			if err := dec.Decode(&md); err != nil {
				return fail("key metadata", eof(err))
			}
			if md.Version != guidellmSchema {
				return fail("key metadata.version", fmt.Errorf("%d, want %d (guidellm 0.8's benchmarks.json)", md.Version, guidellmSchema))
			}
			o.Version = md.Tool
		case "benchmarks":
			if scs, err = guidellmBenchmarks(dec, name, o, ro.hists); err != nil {
				return nil, o, err
			}
		default:
			if err := skipValue(dec); err != nil {
				return fail("key "+key, err)
			}
		}
	}
	if o.Version == "" {
		return fail("key metadata.guidellm_version", fmt.Errorf("missing (want guidellm 0.8's benchmarks.json)"))
	}
	return scs, o, nil
}

// guidellmBenchmarks reads the "benchmarks" array a benchmark at a time.
func guidellmBenchmarks(dec *json.Decoder, name string, o Origin, hists bool) ([]result.Scenario, error) {
	if err := expect(dec, '['); err != nil {
		return nil, &FileError{File: name, Tool: GuideLLM, Where: "key benchmarks", Err: err}
	}
	var scs []result.Scenario
	for i := 0; dec.More(); i++ {
		where := fmt.Sprintf("key benchmarks[%d]", i)
		p, err := guidellmBenchmark(dec, where, hists)
		if err != nil {
			return nil, &FileError{File: name, Tool: GuideLLM, Where: err.where, Err: err.err}
		}
		scs = append(scs, p.scenario("guidellm", Origin{Tool: GuideLLM, File: name}))
	}
	if _, err := dec.Token(); err != nil {
		return nil, &FileError{File: name, Tool: GuideLLM, Where: "key benchmarks", Err: eof(err)}
	}
	return scs, nil
}

// guidellmBenchmark reads one benchmark: its strategy, its metrics (the tool's aggregates) and
// its requests, one at a time.
func guidellmBenchmark(dec *json.Decoder, where string, hists bool) (*part, *recordErr) {
	p := newPart("benchmark", hists)
	if err := expect(dec, '{'); err != nil {
		return nil, &recordErr{where, err}
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, &recordErr{where, eof(err)}
		}
		key, _ := t.(string)
		at := where + "." + key
		switch key {
		case "config":
			var c struct {
				Strategy map[string]any `json:"strategy"`
			}
			if err := dec.Decode(&c); err != nil {
				return nil, &recordErr{at, eof(err)}
			}
			p.guidellmStrategy(c.Strategy)
		case "metrics":
			var m map[string]json.RawMessage
			if err := dec.Decode(&m); err != nil {
				return nil, &recordErr{at, eof(err)}
			}
			p.guidellmMetrics(m)
		case "requests":
			if err := p.guidellmRequests(dec, at); err != nil {
				return nil, err
			}
		default:
			if err := skipValue(dec); err != nil {
				return nil, &recordErr{at, err}
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, &recordErr{where, eof(err)}
	}
	return p, nil
}

func (p *part) guidellmStrategy(s map[string]any) {
	kind, _ := s["type_"].(string)
	p.params["strategy"] = kind
	for _, k := range []string{"streams", "rate", "max_concurrency"} {
		if v, ok := s[k]; ok && v != nil {
			p.params[k] = v
		}
	}
	switch {
	case s["streams"] != nil:
		p.name = fmt.Sprintf("%s=%v", kind, s["streams"])
	case s["rate"] != nil:
		p.name = fmt.Sprintf("%s=%v", kind, s["rate"])
	case kind != "":
		p.name = kind
	}
}

// guidellmMetrics keeps guidellm's aggregates of the successful requests, by their names.
func (p *part) guidellmMetrics(m map[string]json.RawMessage) {
	for name, raw := range m {
		var d struct {
			Successful *struct {
				Mean        float64            `json:"mean"`
				Median      float64            `json:"median"`
				Std         float64            `json:"std_dev"`
				Count       float64            `json:"count"`
				Percentiles map[string]float64 `json:"percentiles"`
			} `json:"successful"`
		}
		if json.Unmarshal(raw, &d) == nil && d.Successful != nil {
			s := d.Successful
			k := name + ".successful."
			p.own[k+"mean"], p.own[k+"median"], p.own[k+"std_dev"], p.own[k+"count"] = s.Mean, s.Median, s.Std, s.Count
			for pk, v := range s.Percentiles {
				p.own[k+"percentiles."+pk] = v
			}
			continue
		}
		var totals map[string]float64
		if json.Unmarshal(raw, &totals) == nil {
			for k, v := range totals {
				p.own[name+"."+k] = v
			}
		}
	}
}

// guidellmRequests reads "requests": successful, errored and incomplete arrays, a request at a
// time ("total" repeats them and is skipped).
func (p *part) guidellmRequests(dec *json.Decoder, where string) *recordErr {
	if err := expect(dec, '{'); err != nil {
		return &recordErr{where, err}
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return &recordErr{where, eof(err)}
		}
		status, _ := t.(string)
		at := where + "." + status
		if status != "successful" && status != "errored" && status != "incomplete" {
			if err := skipValue(dec); err != nil {
				return &recordErr{at, err}
			}
			continue
		}
		if t, err := dec.Token(); err != nil {
			return &recordErr{at, eof(err)}
		} else if t == nil {
			continue
		} else if t != json.Delim('[') {
			return &recordErr{at, fmt.Errorf("want an array, found %v", t)}
		}
		for i := 0; dec.More(); i++ {
			var g guidellmRequest
			if err := dec.Decode(&g); err != nil {
				return &recordErr{fmt.Sprintf("%s[%d]", at, i), eof(err)}
			}
			if err := p.add(g.request(status)); err != nil {
				return &recordErr{fmt.Sprintf("%s[%d]", at, i), err}
			}
		}
		if _, err := dec.Token(); err != nil {
			return &recordErr{at, eof(err)}
		}
	}
	if _, err := dec.Token(); err != nil {
		return &recordErr{where, eof(err)}
	}
	return nil
}

// request is g as a request: guidellm's times are Unix seconds.
func (g *guidellmRequest) request(status string) Request {
	tm := g.Info.Timings
	var r Request
	if tm.Start != nil {
		s, frac := math.Modf(*tm.Start)
		r.Start = time.Unix(int64(s), int64(frac*1e9))
	}
	after := func(x *float64) time.Duration {
		if x == nil || tm.Start == nil {
			return 0
		}
		return sec(*x - *tm.Start)
	}
	r.FirstToken, r.LastToken, r.End = after(tm.FirstToken), after(tm.LastToken), after(tm.End)
	if g.PromptTokens != nil {
		r.InputTokens = *g.PromptTokens
	}
	if g.OutputTokens != nil {
		r.OutputTokens = *g.OutputTokens
	}
	switch {
	case status == "incomplete":
		r.Err = "incomplete: the benchmark ended before the request did"
	case g.Info.Error != nil && *g.Info.Error != "":
		r.Err = *g.Info.Error
	case status == "errored":
		r.Err = "errored"
	case tm.Start == nil:
		r.Err = "no request_start time"
	}
	return r
}
