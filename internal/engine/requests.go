package engine

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// WithRequestLog writes every call of serving scenarios (a serving load mode or an openai subject)
// to dir/<benchmark>__<scenario>.jsonl, one JSON object per line, with its raw timestamps.
func WithRequestLog(dir string) Option { return func(e *Engine) { e.requestLog = dir } }

// requestLogName returns the file name of a scenario's request log.
func requestLogName(sc *suite.Scenario) string { return scenarioFileBase(sc) + ".jsonl" }

// requestLog is a load.Sink that writes each call and passes it on. Each line holds:
//
//	n               completion order, from 0
//	phase           "warmup" or "measure"
//	scheduled_ns    intended send time (open loop), Unix nanoseconds; absent otherwise
//	start_ns        send time, Unix nanoseconds
//	first_token_ns  first content token, Unix nanoseconds; absent when none
//	end_ns          end of the response, Unix nanoseconds
//	token_us        each content event's arrival, microseconds after start_ns
//	tokens          tokens per content event, when any event carried other than one
//	input_tokens, output_tokens, tokens_counted
//	send_delay_us   the client's delay from the call to the request's last byte leaving, when measured
//	read_delay_us   the client's longest delay from the kernel receiving response bytes to reading them
//	error, error_kind  for a failed call
type requestLog struct {
	sink
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	n   int
	buf []byte
	err error
}

func openRequestLog(dir string, sc *suite.Scenario, next sink) (*requestLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, requestLogName(sc)))
	if err != nil {
		return nil, err
	}
	return &requestLog{sink: next, f: f, w: bufio.NewWriterSize(f, 1<<16)}, nil
}

// Observe writes the call, then passes it on.
func (l *requestLog) Observe(p load.Phase, o subject.Observation, err error) {
	l.mu.Lock()
	l.write(p, &o, err)
	l.mu.Unlock()
	l.sink.Observe(p, o, err)
}

func (l *requestLog) write(p load.Phase, o *subject.Observation, err error) {
	if l.err != nil {
		return
	}
	b := l.buf[:0]
	b = append(b, `{"n":`...)
	b = strconv.AppendInt(b, int64(l.n), 10)
	l.n++
	if p == load.Warmup {
		b = append(b, `,"phase":"warmup"`...)
	} else {
		b = append(b, `,"phase":"measure"`...)
	}
	ts := func(name string, t time.Time) {
		if !t.IsZero() {
			b = append(b, `,"`...)
			b = append(b, name...)
			b = append(b, `":`...)
			b = strconv.AppendInt(b, t.UnixNano(), 10)
		}
	}
	ts("scheduled_ns", o.Scheduled)
	ts("start_ns", o.Start)
	ts("first_token_ns", o.FirstToken)
	ts("end_ns", o.End)
	if len(o.Tokens) > 0 {
		b = append(b, `,"token_us":[`...)
		multi := false
		for i, t := range o.Tokens {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, t.At.Sub(o.Start).Microseconds(), 10)
			multi = multi || t.Tokens != 1
		}
		b = append(b, ']')
		if multi {
			b = append(b, `,"tokens":[`...)
			for i, t := range o.Tokens {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(t.Tokens), 10)
			}
			b = append(b, ']')
		}
	}
	if o.InputTokens > 0 {
		b = append(b, `,"input_tokens":`...)
		b = strconv.AppendInt(b, int64(o.InputTokens), 10)
	}
	if o.OutputTokens > 0 || len(o.Tokens) > 0 {
		b = append(b, `,"output_tokens":`...)
		b = strconv.AppendInt(b, int64(o.OutputTokens), 10)
	}
	if o.TokensCounted {
		b = append(b, `,"tokens_counted":true`...)
	}
	// The client's own delays, to find which requests a client_bound warning is about.
	for _, d := range [...]struct{ key, value string }{{`,"send_delay_us":`, figures.ValueSendDelay}, {`,"read_delay_us":`, figures.ValueReadDelay}} {
		if v, ok := o.Values[d.value]; ok {
			b = append(b, d.key...)
			b = strconv.AppendInt(b, int64(v*1000), 10)
		}
	}
	if err != nil {
		b = append(b, `,"error":`...)
		b = strconv.AppendQuote(b, err.Error())
		b = append(b, `,"error_kind":`...)
		b = strconv.AppendQuote(b, errorKind(err))
	}
	b = append(b, "}\n"...)
	l.buf = b
	_, l.err = l.w.Write(b)
}

// close flushes the log; its error is a warning on the scenario.
func (l *requestLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.err
	if ferr := l.w.Flush(); err == nil {
		err = ferr
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("request log %s: %w", l.f.Name(), err)
	}
	return nil
}

var _ sink = (*requestLog)(nil)

// servingMaxSamples is the raw samples held per metric in serving scenarios unless WithMaxSamples
// says otherwise. A serving scenario has seven per-request distributions (latency, TTFT, E2E,
// TPOT, ITL, input and output tokens); at the general bound of 2^20 they hold 56 MB and a
// million-request scenario grows the process by 180 MB with the garbage collector's headroom. Past
// the bound, percentiles come from the HDR histogram (three significant digits) and a uniform
// reservoir of this many samples stays for statistical tests.
const servingMaxSamples = 1 << 18

// samplesFor returns the raw-sample bound for a scenario's metrics.
func (e *Engine) samplesFor(c load.Config) int {
	if e.maxSamples == 0 && c.Serving() {
		return servingMaxSamples
	}
	return e.maxSamples
}

// RequestLogName returns the file name, in a run folder's requests/, of the request log of the
// scenario of this id ("benchmark/scenario"): what WithRequestLog writes.
func RequestLogName(id string) string { return fileBase(id) + ".jsonl" }
