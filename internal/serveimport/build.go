package serveimport

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
	"github.com/inferbench/inferbench/subject"
)

// SectionImported is the scenario section (result.Extra.Other) of an imported scenario: the
// tool, and the tool's own aggregates under its names (Imported).
const SectionImported = "imported"

// SectionReportAs is the scenario section holding the figures of As, computed at import from
// the requests' timestamps (a stored run keeps no request log to compute them from later).
const SectionReportAs = "report_as"

// Imported is a scenario's "imported" section: what the tool itself reported.
type Imported struct {
	Tool string `json:"tool"`
	// Requests says whether the file kept each request's timestamps: inferbench's metrics are
	// then its own derivation; else they are the tool's aggregates, mapped (see docs/import.md).
	Requests bool `json:"requests"`
	// Aggregates are the tool's own figures, by its names and in its units.
	Aggregates map[string]float64 `json:"aggregates,omitempty"`
}

// maxSamples bounds the raw samples of each metric of an imported scenario (beyond, a
// histogram), as a run's own distributions are bounded (a variable for tests).
var maxSamples = 1 << 16

// part is one benchmark of a file, made a scenario as its requests are added one at a time.
type part struct {
	name   string
	params map[string]any
	model  string
	figs   *figures.Figures
	as     *Calc
	own    map[string]float64
	// summaries are metrics the file has only as aggregates (no requests): the tool's figure
	// mapped to inferbench's name where the definitions agree.
	summaries        map[string]stats.Summary
	values           map[string]float64
	measured, failed int
	outTokens        int
	counted          bool
	errs             []result.IterationError
	kinds            map[string]int
	warnings         []string
}

func newPart(name string, hists bool) *part {
	p := &part{name: name, params: map[string]any{}, figs: figures.New(maxSamples, nil, true, -1), as: NewCalc(),
		own: map[string]float64{}, summaries: map[string]stats.Summary{}, values: map[string]float64{}, kinds: map[string]int{}}
	if hists {
		// Full-resolution histograms, as a load agent keeps them: the files of several client
		// machines imported as agents merge exactly (Options.Agent).
		p.figs.KeepHistograms()
	}
	return p
}

// errInvalid is a request whose times or counts cannot be a measurement.
var errInvalid = errors.New("invalid value")

// check says what is wrong with r's figures, nil when nothing.
func (r *Request) check() error {
	bad := func(what string, v any) error { return fmt.Errorf("%w: %s = %v", errInvalid, what, v) }
	switch {
	case r.End < 0:
		return bad("latency", r.End)
	case r.FirstToken < 0:
		return bad("time to first token", r.FirstToken)
	case r.Err == "" && r.FirstToken > r.End && r.End > 0:
		return fmt.Errorf("%w: first token %v after the end %v", errInvalid, r.FirstToken, r.End)
	case r.InputTokens < 0:
		return bad("input tokens", r.InputTokens)
	case r.OutputTokens < 0:
		return bad("output tokens", r.OutputTokens)
	}
	for i, c := range r.Chunks {
		if c < 0 || (i > 0 && c < r.Chunks[i-1]) {
			return fmt.Errorf("%w: chunk %d arrives at %v, before the one before it", errInvalid, i, c)
		}
	}
	return nil
}

// add adds one request: to the figures (inferbench's derivation) and to the other tools'
// (Calc).
func (p *part) add(r Request) error {
	if err := r.check(); err != nil {
		return err
	}
	p.measured++
	p.as.Add(r)
	if r.Err != "" {
		p.failed++
		p.kinds["error"]++
		if len(p.errs) < result.MaxIterationErrors {
			p.errs = append(p.errs, result.IterationError{Iteration: p.measured - 1, Error: r.Err})
		}
		p.figs.Observe(subject.Observation{}, errors.New(r.Err))
		return nil
	}
	o := r.observation()
	out, streamed := p.figs.Observe(o, nil)
	if r.InputTokens > 0 {
		p.figs.Add("input_tokens", float64(r.InputTokens))
	}
	if !streamed {
		p.figs.Add("e2e_ms", ms(r.End))
		return nil
	}
	if r.OutputTokens == 0 {
		p.counted = true
	}
	p.figs.Add("output_tokens", float64(out))
	p.outTokens += out
	return nil
}

// observation is r as a subject's observation, the form the figures derive from.
func (r *Request) observation() subject.Observation {
	o := subject.Observation{Start: r.Start, End: r.Start.Add(r.End), InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, Streamed: true}
	o.Scheduled = o.Start
	if r.FirstToken > 0 || len(r.Chunks) > 0 {
		o.FirstToken = r.Start.Add(r.FirstToken)
	}
	for i, c := range r.Chunks {
		n := 1
		if i < len(r.Tokens) {
			n = r.Tokens[i]
		}
		o.Tokens = append(o.Tokens, subject.TokenEvent{At: r.Start.Add(c), Tokens: n})
	}
	return o
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// scenario makes the part a scenario of benchmark bench.
func (p *part) scenario(bench string, o Origin) result.Scenario {
	sc := result.Scenario{Benchmark: bench, Scenario: p.name, Subject: "openai", Params: p.params, Status: result.StatusOK,
		Source: o.File, Metrics: map[string]result.Metric{}, Errors: p.errs, Warnings: p.warnings}
	if p.model != "" {
		sc.Model = p.model
	}
	withRequests := p.measured > 0
	if withRequests {
		p.fill(&sc)
	} else {
		p.fillSummaries(&sc)
	}
	p.certificate(&sc, o.Tool)
	imp := Imported{Tool: o.Tool, Requests: withRequests, Aggregates: finiteOnly(p.own)}
	sc.Extra.Other = map[string]json.RawMessage{}
	if b, err := json.Marshal(imp); err == nil {
		sc.Extra.Other[SectionImported] = b
	}
	if withRequests {
		if b, err := json.Marshal(p.as.All()); err == nil {
			sc.Extra.Other[SectionReportAs] = b
		}
	}
	return sc
}

// fill writes the figures derived from the requests, as the engine's collector does.
func (p *part) fill(sc *result.Scenario) {
	sc.Iterations = result.Iterations{Measured: p.measured, Failed: p.failed}
	if p.failed > 0 {
		sc.Extra.ErrorsByKind = p.kinds
	}
	p.figs.Each(func(name string, d *stats.Dist) {
		s, err := d.Summary()
		if err != nil {
			return
		}
		m := result.NewMetric(name)
		m.Summary = &s
		m.Samples = append([]float64(nil), d.Samples()...)
		sc.Metrics[name] = m
	})
	setValue(sc, "success_rate", float64(p.measured-p.failed)/float64(p.measured))
	setValue(sc, "error_rate", float64(p.failed)/float64(p.measured))
	if start, end := p.figs.Window(); end.After(start) {
		win := end.Sub(start).Seconds()
		ok := float64(p.measured - p.failed)
		sc.StartedAt, sc.DurationS = start, win
		setValue(sc, "requests_per_s", ok/win)
		if p.outTokens > 0 {
			setValue(sc, "output_tokens_per_s", float64(p.outTokens)/win)
		}
	}
	if co, _ := p.figs.Coalescing(); co.Streamed > 0 {
		setValue(sc, "ttft_coalesced_rate", co.TTFTRate())
	}
	if hs := p.figs.Histograms(); len(hs) > 0 {
		sc.Extra.Histograms = map[string]*stats.Histogram{}
		for name, h := range hs {
			if h.N() > 0 {
				sc.Extra.Histograms[name] = h
			}
		}
		start, end := p.figs.Window()
		sc.Extra.Window = &result.Window{Start: start, End: end, OK: p.measured - p.failed, Items: p.measured - p.failed, OutputTokens: p.outTokens}
	}
	if m, ok := sc.Metrics["output_tokens"]; ok && p.counted {
		m.Note = "counted from content chunks: the tool recorded no token count"
		sc.Metrics["output_tokens"] = m
	}
	if p.failed > 0 {
		sc.Status = result.StatusFailed
		sc.Error = fmt.Sprintf("%d of %d requests failed", p.failed, p.measured)
	}
}

// fillSummaries writes the metrics of a file without requests: the tool's aggregates mapped to
// inferbench's names where the definitions agree (the summaries carry no raw samples: compare
// shows them, never tests them).
func (p *part) fillSummaries(sc *result.Scenario) {
	names := make([]string, 0, len(p.summaries))
	for n := range p.summaries {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := p.summaries[n]
		s.Warnings = append(s.Warnings, "imported summary without the requests: the tool's own figure")
		m := result.NewMetric(n)
		m.Summary = &s
		sc.Metrics[n] = m
	}
	for n, v := range p.values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			setValue(sc, n, v)
		}
	}
	sc.Warnings = append(sc.Warnings, "the file keeps no request's timestamps: the metrics are the tool's own aggregates, by its definitions (docs/import.md)")
}

func setValue(sc *result.Scenario, name string, v float64) {
	m := result.NewMetric(name)
	m.Value = &v
	sc.Metrics[name] = m
}

// finiteOnly is m without NaN and infinite values (JSON has none).
func finiteOnly(m map[string]float64) map[string]float64 {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	return out
}
