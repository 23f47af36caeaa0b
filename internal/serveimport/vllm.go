package serveimport

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// vllmArrays are the per-request arrays of `vllm bench serve --save-detailed` (serve.py's
// result dict, vLLM 0.33.0): parallel, element i of each is request i.
var vllmArrays = []string{"start_times", "ttfts", "itls", "latencies", "input_lens", "output_lens", "errors"}

// vllmDoc is one document of a vLLM result file (--append-result writes several): its scalar
// keys, and where each per-request array's value starts.
type vllmDoc struct {
	head    map[string]any
	offsets map[string]int64
}

// readVLLM reads `vllm bench serve --save-result` JSON (one document, or one a line with
// --append-result; `vllm bench sweep serve`'s summary.json, an array of them, a scenario each). Its per-request arrays are parallel, each a key of its own: a first pass
// finds where each starts, then one decoder a key reads them in step, a request at a time, so
// what is held is one request whatever the file's size. Without the arrays (no
// --save-detailed) the scenario has vLLM's aggregates.
func readVLLM(path, name string, _ bool, ro readOpts) ([]result.Scenario, Origin, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Origin{}, err
	}
	defer f.Close()
	fail := func(where string, err error) ([]result.Scenario, Origin, error) {
		return nil, Origin{}, &FileError{File: name, Tool: VLLM, Where: where, Err: err}
	}
	br := bufio.NewReaderSize(f, 1<<16)
	sweep := false // bench sweep's summary.json: an array of bench serve's documents
	for {
		b, err := br.Peek(1)
		if err != nil || (b[0] != ' ' && b[0] != '\t' && b[0] != '\n' && b[0] != '\r') {
			sweep = err == nil && b[0] == '['
			break
		}
		br.Discard(1)
	}
	dec := json.NewDecoder(br)
	if sweep {
		dec.Token()
	}
	var scs []result.Scenario
	seen := map[string]int{}
	for n := 0; !sweep || dec.More(); n++ {
		d, err := vllmHead(dec)
		if errors.Is(err, io.EOF) && n > 0 && !sweep {
			break
		}
		if err != nil {
			return fail(fmt.Sprintf("document %d", n+1), err)
		}
		p := newPart(vllmScenario(d.head), ro.hists)
		if seen[p.name]++; seen[p.name] > 1 { // a sweep's combinations of other parameters, or repeated runs
			p.name += fmt.Sprintf(",run=%d", seen[p.name])
		}
		if err := p.vllmRequests(path, d, vllmDate(d.head, ro.at)); err != nil {
			return fail(fmt.Sprintf("document %d", n+1), err)
		}
		p.vllmAggregates(d.head)
		bench, _ := d.head["model_id"].(string)
		if bench == "" {
			bench = "vllm-bench-serve"
		}
		p.model = bench
		scs = append(scs, p.scenario(bench, Origin{Tool: VLLM, File: name}))
	}
	return scs, Origin{}, nil
}

// vllmHead reads one document: its scalars, and the offsets of its per-request arrays (skipped
// here, read by vllmRequests). io.EOF: no document left.
func vllmHead(dec *json.Decoder) (vllmDoc, error) {
	d := vllmDoc{head: map[string]any{}, offsets: map[string]int64{}}
	t, err := dec.Token()
	if err != nil {
		return d, err
	}
	if t != json.Delim('{') {
		return d, fmt.Errorf("want a JSON object, found %v", t)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return d, eof(err)
		}
		key, _ := t.(string)
		for _, a := range vllmArrays {
			if key == a {
				d.offsets[key] = dec.InputOffset()
			}
		}
		var v json.RawMessage
		if _, arr := d.offsets[key]; arr || key == "generated_texts" || key == "queue_times" {
			err = skipValue(dec) // read in step later, or not at all
		} else if err = dec.Decode(&v); err == nil {
			var x any
			if json.Unmarshal(v, &x) == nil {
				if _, nested := x.([]any); !nested {
					d.head[key] = x
				}
			}
		}
		if err != nil {
			return d, fmt.Errorf("key %s: %w", key, eof(err))
		}
	}
	if _, err := dec.Token(); err != nil {
		return d, eof(err)
	}
	if _, ok := d.head["completed"]; !ok {
		return d, fmt.Errorf("no key completed (is this vllm bench serve --save-result output?)")
	}
	return d, nil
}

// vllmScenario names the scenario by its load: request rate and max concurrency.
func vllmScenario(h map[string]any) string {
	return fmt.Sprintf("rate=%v,concurrency=%v", orNone(h["request_rate"]), orNone(h["max_concurrency"]))
}

func orNone(v any) any {
	if v == nil {
		return "none"
	}
	return v
}

// vllmDate is the file's date (serve.py's "date", local time, written when the benchmark
// ended; read as UTC), else at.
func vllmDate(h map[string]any, at time.Time) time.Time {
	s, _ := h["date"].(string)
	if t, err := time.Parse("20060102-150405", s); err == nil {
		return t
	}
	return at
}

// cursor reads one per-request array a element at a time.
type cursor struct {
	f   *os.File
	dec *json.Decoder
	key string
}

func openCursor(path string, off int64, key string) (*cursor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<14)
	if _, err := br.ReadString(':'); err != nil { // the offset is the key's end
		f.Close()
		return nil, fmt.Errorf("key %s: %w", key, eof(err))
	}
	c := &cursor{f: f, dec: json.NewDecoder(br), key: key}
	if err := expect(c.dec, '['); err != nil {
		f.Close()
		return nil, fmt.Errorf("key %s: %w", key, err)
	}
	return c, nil
}

// next decodes the next element into v; false after the last.
func (c *cursor) next(i int, v any) (bool, error) {
	if !c.dec.More() {
		return false, nil
	}
	if err := c.dec.Decode(v); err != nil {
		return false, fmt.Errorf("key %s[%d]: %w", c.key, i, eof(err))
	}
	return true, nil
}

// vllmRequests reads the document's per-request arrays in step, a request at a time.
func (p *part) vllmRequests(path string, d vllmDoc, date time.Time) error {
	if _, ok := d.offsets["ttfts"]; !ok {
		return nil // no --save-detailed
	}
	cs := map[string]*cursor{}
	defer func() {
		for _, c := range cs {
			c.f.Close()
		}
	}()
	for key, off := range d.offsets {
		c, err := openCursor(path, off, key)
		if err != nil {
			return err
		}
		cs[key] = c
	}
	if cs["start_times"] == nil || cs["itls"] == nil {
		return fmt.Errorf("key ttfts without start_times and itls: not the per-request arrays of vllm bench serve --save-detailed")
	}
	dur, _ := d.head["duration"].(float64)
	anchor := date.Add(-time.Duration(dur * 1e9)) // the date is the benchmark's end
	var first float64
	for i := 0; ; i++ {
		var v struct {
			start, ttft, lat float64
			itl              []float64
			in, out          int
			err              *string
		}
		more, err := cs["ttfts"].next(i, &v.ttft)
		if err != nil || !more {
			return err
		}
		for _, f := range []struct {
			key string
			v   any
		}{{"start_times", &v.start}, {"itls", &v.itl}, {"latencies", &v.lat}, {"input_lens", &v.in}, {"output_lens", &v.out}, {"errors", &v.err}} {
			if c := cs[f.key]; c != nil {
				if ok, err := c.next(i, f.v); err != nil {
					return err
				} else if !ok {
					return fmt.Errorf("key %s: %d elements, key ttfts has more", f.key, i)
				}
			}
		}
		if i == 0 {
			first = v.start
		}
		r := Request{Start: anchor.Add(time.Duration((v.start - first) * 1e9)), InputTokens: v.in, OutputTokens: v.out}
		if v.err != nil && *v.err != "" {
			r.Err = *v.err
		} else {
			r.FirstToken, r.End = sec(v.ttft), sec(v.lat)
			r.Chunks = append(make([]time.Duration, 0, len(v.itl)+1), r.FirstToken)
			at := v.ttft
			for _, g := range v.itl {
				at += g
				r.Chunks = append(r.Chunks, sec(at))
			}
			if last := r.Chunks[len(r.Chunks)-1]; r.End < last && last-r.End < time.Microsecond {
				r.End = last // rounding: the sum of the gaps is the latency
			}
		}
		if err := p.add(r); err != nil {
			return fmt.Errorf("request %d: %w", i, err)
		}
	}
}

func sec(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// vllmAggregates keeps vLLM's own figures (every number of the document) and the load's
// parameters; without requests, its TTFT, TPOT, ITL and E2EL summaries and throughputs become
// the scenario's metrics.
func (p *part) vllmAggregates(h map[string]any) {
	for k, v := range h {
		switch x := v.(type) {
		case float64:
			p.own[k] = x
		case string:
			if k == "request_rate" || k == "backend" || k == "label" {
				p.params[k] = x
			}
		}
	}
	for _, k := range []string{"request_rate", "max_concurrency", "burstiness", "num_prompts", "run_number"} {
		if v, ok := h[k]; ok && v != nil {
			p.params[k] = v
		}
	}
	n := int(p.own["completed"])
	for short, name := range map[string]string{"ttft": "ttft_ms", "tpot": "tpot_ms", "itl": "itl_ms", "e2el": "e2e_ms"} {
		mean, ok := p.own["mean_"+short+"_ms"]
		if !ok {
			continue
		}
		s := stats.Summary{N: n, Mean: mean, Std: p.own["std_"+short+"_ms"], Median: p.own["median_"+short+"_ms"],
			P90: p.own["p90_"+short+"_ms"], P95: p.own["p95_"+short+"_ms"], P99: p.own["p99_"+short+"_ms"]}
		s.Warnings = []string{vllmCaveat[short], "vLLM's summary: min, max, p25, p75 and the percentiles it was not asked for (--metric-percentiles) are unknown, shown as 0"}
		p.summaries[name] = s
	}
	if v, ok := p.own["request_throughput"]; ok {
		p.values["requests_per_s"] = v
	}
	if v, ok := p.own["output_throughput"]; ok {
		p.values["output_tokens_per_s"] = v
	}
}

// vllmCaveat says how each of vLLM's aggregates differs from inferbench's metric of the name
// it is mapped to.
var vllmCaveat = map[string]string{
	"ttft": "vLLM's TTFT: the first chunk with streamed output (an empty content chunk without a role counts) − send",
	"tpot": "vLLM's TPOT ends at the last content chunk, not the response's end",
	"itl":  "vLLM's ITL is one sample per chunk, not per token, and counts a final empty content chunk's gap",
	"e2el": "vLLM's E2EL ends at the last content chunk, not the response's end",
}
