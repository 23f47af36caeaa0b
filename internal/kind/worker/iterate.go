package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

type runReply struct {
	N            int                   `json:"n"`
	LatencyMS    []float64             `json:"latency_ms"`
	CPUMS        column                `json:"cpu_ms"` // the iteration's CPU time in the worker
	Items        column                `json:"items"`
	TTFTMS       column                `json:"ttft_ms"`
	TokenMS      [][]float64           `json:"token_ms"`
	TokenCount   column                `json:"token_count"`
	InputTokens  column                `json:"input_tokens"`
	OutputTokens column                `json:"output_tokens"`
	IterValues   map[string][]*float64 `json:"iter_values"`
	Values       map[string]float64    `json:"values"`
	ElapsedMS    float64               `json:"elapsed_ms"`
	// Metrics declare units and directions of the figures in iter_values and values.
	Metrics map[string]subject.MetricInfo `json:"metrics"`
	// Counted is how many calls instruction mode counted (counted.go); CountedBy what the
	// counts depend on in the worker.
	Counted   int               `json:"counted"`
	CountedBy map[string]string `json:"counted_by"`
	// Bytecode is the bytecode.json instruction mode wrote, once (counted.go); Operators the
	// operators.json of a worker that imported torch, and OtherDumps the callgrind dumps its
	// pass made after the counted calls.
	Bytecode   string `json:"bytecode"`
	Operators  string `json:"operators"`
	OtherDumps int    `json:"other_dumps"`
}

// Do runs one iteration.
func (w *Worker) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	obs, err := w.DoBatch(ctx, r, 1)
	if len(obs) == 0 {
		return subject.Observation{}, err
	}
	return obs[0], err
}

// DoBatch runs n iterations in one round trip ("warmup" when r.Warmup, else "run") and returns
// one observation per iteration. Each observation's Values["latency_ms"] is the worker's own
// timing; its Start and End lay the iterations end to end over the round trip, each carrying an
// equal share of the protocol's overhead, so End−Start is the harness's view of the iteration.
// FirstToken and Tokens are the worker's offsets from the iteration's start.
func (w *Worker) DoBatch(ctx context.Context, r subject.Request, n int) ([]subject.Observation, error) {
	if n < 1 {
		n = 1
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, errors.New("worker: call after Close")
	}
	op := "run"
	if r.Warmup {
		op = "warmup"
	}
	var timeout time.Duration
	if w.cfg.Timeouts.Iteration > 0 {
		timeout = w.cfg.Timeouts.Iteration * time.Duration(n)
	}
	var rr runReply
	t0 := time.Now()
	err := w.p.call(ctx, op, map[string]any{"n": n}, timeout, &rr)
	t1 := time.Now()
	if err != nil {
		return nil, err
	}
	if len(rr.LatencyMS) != n {
		return nil, w.p.fail(op, fmt.Sprintf("answered %d samples for %d iterations", len(rr.LatencyMS), n))
	}
	if err := rr.check(); err != nil {
		return nil, fmt.Errorf("worker %s: %s reply: %w", w.p.label, op, err)
	}
	maps.Copy(w.decls, rr.Metrics) // w.mu is held: the latest declaration wins
	obs := observations(&rr, n, t0, t1)
	if w.count != nil && !r.Warmup {
		if err := w.count.attach(&rr, obs); err != nil {
			return nil, err
		}
	}
	return obs, nil
}

// check refuses a reply with a time that is negative or beyond a year, or a count that is
// negative or beyond any real one: the worker measured nothing that could be summarised.
func (rr *runReply) check() error {
	times := func(name string, i int, v float64) error {
		if v < 0 || v > result.MaxMillis {
			return fmt.Errorf("%s[%d] = %v is not a valid time in ms", name, i, v)
		}
		return nil
	}
	counts := func(name string, c column, limit float64) error {
		for i := range max(1, len(c.list)) {
			if v, ok := c.at(i); ok && (v < 0 || v > limit) {
				return fmt.Errorf("%s[%d] = %v is not a valid count", name, i, v)
			}
		}
		return nil
	}
	for i, v := range rr.LatencyMS {
		if err := times("latency_ms", i, v); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		name string
		col  column
	}{{"ttft_ms", rr.TTFTMS}, {CPUTime, rr.CPUMS}} {
		for i := range max(1, len(c.col.list)) {
			if v, ok := c.col.at(i); ok {
				if err := times(c.name, i, v); err != nil {
					return err
				}
			}
		}
	}
	for i, ts := range rr.TokenMS {
		for _, v := range ts {
			if err := times("token_ms", i, v); err != nil {
				return err
			}
		}
	}
	for _, c := range []struct {
		name  string
		col   column
		limit float64
	}{{"items", rr.Items, 1e9}, {"token_count", rr.TokenCount, result.MaxTokens}, {"input_tokens", rr.InputTokens, result.MaxTokens}, {"output_tokens", rr.OutputTokens, result.MaxTokens}} {
		if err := counts(c.name, c.col, c.limit); err != nil {
			return err
		}
	}
	return nil
}

// observations lays n worker-timed iterations over the round trip [t0, t1].
func observations(rr *runReply, n int, t0, t1 time.Time) []subject.Observation {
	var sum time.Duration
	for _, v := range rr.LatencyMS {
		sum += msDuration(v)
	}
	over := (t1.Sub(t0) - sum) / time.Duration(n)
	if over < 0 {
		over = 0
	}
	obs := make([]subject.Observation, n)
	cur := t0
	for i := range obs {
		o := &obs[i]
		lat := rr.LatencyMS[i]
		o.Start = cur
		o.End = cur.Add(msDuration(lat) + over)
		cur = o.End
		o.Values = make(map[string]float64, 2+len(rr.Values)+len(rr.IterValues))
		if v, ok := rr.CPUMS.at(i); ok {
			o.Values[CPUTime] = v // a figure of the function's own by that name wins (below)
		}
		for k, v := range rr.Values {
			o.Values[k] = v
		}
		for k, col := range rr.IterValues {
			if i < len(col) && col[i] != nil {
				o.Values[k] = *col[i]
			}
		}
		o.Values["latency_ms"] = lat
		if v, ok := rr.Items.at(i); ok {
			o.Items = int(v)
		}
		if v, ok := rr.TTFTMS.at(i); ok {
			o.FirstToken = o.Start.Add(msDuration(v))
		}
		if i < len(rr.TokenMS) && len(rr.TokenMS[i]) > 0 {
			per := 1
			if v, ok := rr.TokenCount.at(i); ok && v >= 1 {
				per = int(v)
			}
			o.Tokens = make([]subject.TokenEvent, len(rr.TokenMS[i]))
			for j, t := range rr.TokenMS[i] {
				o.Tokens[j] = subject.TokenEvent{At: o.Start.Add(msDuration(t)), Tokens: per}
			}
			if o.FirstToken.IsZero() {
				o.FirstToken = o.Tokens[0].At
			}
		}
		if v, ok := rr.OutputTokens.at(i); ok {
			o.OutputTokens = int(v)
		}
		if v, ok := rr.InputTokens.at(i); ok {
			o.InputTokens = int(v)
		}
	}
	return obs
}

// CPUTime is the metric of an iteration's CPU time in the worker (ms): the process's CPU clock
// around the call, every thread of the worker included (the reply's cpu_ms column).
const CPUTime = "cpu_ms"

// column is a reply column: one number for every iteration, or a list with nulls for gaps.
type column struct {
	one  *float64
	list []*float64
}

func (c *column) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	switch {
	case s == "null":
		return nil
	case strings.HasPrefix(s, "["):
		return json.Unmarshal(b, &c.list)
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	c.one = &v
	return nil
}

func (c column) at(i int) (float64, bool) {
	if c.one != nil {
		return *c.one, true
	}
	if i < len(c.list) && c.list[i] != nil {
		return *c.list[i], true
	}
	return 0, false
}

func msDuration(ms float64) time.Duration {
	if math.IsNaN(ms) || ms < 0 {
		return 0
	}
	return time.Duration(ms * 1e6)
}
