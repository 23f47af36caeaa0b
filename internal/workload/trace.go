package workload

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferbench/inferbench/result"
)

// Trace formats: timestamped requests, replayed at their times by load mode trace.
const (
	// FormatTrace is inferbench's trace, JSON Lines: {"timestamp": seconds, "input_tokens": n,
	// "output_tokens": m, "session_id": "..."}; input_length and output_length are accepted for
	// the lengths, and hash_ids as in Mooncake's traces.
	FormatTrace = "trace"
	// FormatMooncake is Mooncake's published traces as they are, JSON Lines: {"timestamp": ms,
	// "input_length": n, "output_length": m, "hash_ids": [...]}; each hash id names a block of
	// MooncakeBlock tokens, and prompts with the same leading ids share that prefix.
	FormatMooncake = "mooncake"
	// FormatAzure is the Azure LLM inference traces (AzurePublicDataset) as they are, CSV with
	// the header TIMESTAMP,ContextTokens,GeneratedTokens and times like 2023-11-16 18:15:46.6805900.
	FormatAzure = "azure"
)

// MooncakeBlock is the number of tokens a Mooncake hash id stands for.
const MooncakeBlock = 512

// traceEntry is one request of a trace.
type traceEntry struct {
	at      time.Duration // since the trace's first request
	in, out int
	session string
	hashes  []uint64
}

// isTrace says whether format is a trace's.
func isTrace(format string) bool {
	return format == FormatTrace || format == FormatMooncake || format == FormatAzure
}

// traceRecord is a line of a JSONL trace (inferbench's or Mooncake's).
type traceRecord struct {
	Timestamp    *float64        `json:"timestamp"`
	InputTokens  *int            `json:"input_tokens"`
	InputLength  *int            `json:"input_length"`
	OutputTokens *int            `json:"output_tokens"`
	OutputLength *int            `json:"output_length"`
	SessionID    json.RawMessage `json:"session_id"`
	HashIDs      []uint64        `json:"hash_ids"`
}

// readTrace reads a trace in format from r, sorted by time, at most limit entries (0: all).
func readTrace(path, format string, r io.Reader, limit int) ([]traceEntry, error) {
	var out []traceEntry
	var err error
	if format == FormatAzure {
		out, err = readAzure(path, r, limit)
	} else {
		out, err = readTraceJSONL(path, format, r, limit)
	}
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("workload %s: no requests in the trace", path)
	}
	slices.SortStableFunc(out, func(a, b traceEntry) int { return int(a.at - b.at) })
	first := out[0].at
	for i := range out {
		out[i].at -= first
	}
	return out, nil
}

func readTraceJSONL(path, format string, r io.Reader, limit int) ([]traceEntry, error) {
	unit := 1.0 // seconds
	if format == FormatMooncake {
		unit = 1e-3
	}
	return readLines(path, r, limit, func(line int, b []byte) (traceEntry, error) {
		var rec traceRecord
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&rec); err != nil {
			return traceEntry{}, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		in, out1 := rec.InputTokens, rec.OutputTokens
		if in == nil {
			in = rec.InputLength
		}
		if out1 == nil {
			out1 = rec.OutputLength
		}
		switch {
		case rec.Timestamp == nil:
			return traceEntry{}, fmt.Errorf(`%s:%d: no "timestamp"`, path, line)
		case math.IsNaN(*rec.Timestamp) || math.IsInf(*rec.Timestamp, 0) || *rec.Timestamp < 0 || *rec.Timestamp*unit > 1e9:
			return traceEntry{}, fmt.Errorf("%s:%d: timestamp %v is not a time", path, line, *rec.Timestamp)
		case in == nil || *in < 1 || *in > result.MaxTokens:
			return traceEntry{}, fmt.Errorf(`%s:%d: "input_tokens" (or "input_length"): want a count from 1 to %d`, path, line, int(result.MaxTokens))
		case out1 == nil || *out1 < 1 || *out1 > result.MaxTokens:
			return traceEntry{}, fmt.Errorf(`%s:%d: "output_tokens" (or "output_length"): want a count from 1 to %d`, path, line, int(result.MaxTokens))
		}
		e := traceEntry{at: time.Duration(math.Round(*rec.Timestamp * unit * 1e9)), in: *in, out: *out1, hashes: rec.HashIDs}
		if len(rec.SessionID) > 0 && string(rec.SessionID) != "null" {
			e.session = strings.Trim(string(rec.SessionID), `"`)
		}
		return e, nil
	})
}

// azureTime is the layout of the Azure traces' TIMESTAMP column (7 fractional digits, or fewer).
const azureTime = "2006-01-02 15:04:05.999999999"

func readAzure(path string, r io.Reader, limit int) ([]traceEntry, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	ti, ok1 := col["TIMESTAMP"]
	ci, ok2 := col["ContextTokens"]
	gi, ok3 := col["GeneratedTokens"]
	if !ok1 || !ok2 || !ok3 {
		return nil, fmt.Errorf("workload %s:1: an Azure trace has the columns TIMESTAMP, ContextTokens and GeneratedTokens, not %v", path, head)
	}
	var out []traceEntry
	var t0 time.Time
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("workload %s: %w", path, err)
		}
		at, err := time.Parse(azureTime, strings.TrimSpace(rec[ti]))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: TIMESTAMP %q: want like 2023-11-16 18:15:46.6805900", path, line, rec[ti])
		}
		in, err1 := strconv.Atoi(strings.TrimSpace(rec[ci]))
		gen, err2 := strconv.Atoi(strings.TrimSpace(rec[gi]))
		if err1 != nil || err2 != nil || in < 1 || gen < 1 || in > result.MaxTokens || gen > result.MaxTokens {
			return nil, fmt.Errorf("%s:%d: ContextTokens %q and GeneratedTokens %q: want counts from 1 to %d", path, line, rec[ci], rec[gi], int(result.MaxTokens))
		}
		if t0.IsZero() {
			t0 = at
		}
		out = append(out, traceEntry{at: at.Sub(t0), in: in, out: gen})
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

// tracePrompt builds the prompt of trace entry i: text of its input length, made of one block
// per hash id (the same id, the same text: shared prefixes stay shared) or of a window into the
// corpus seeded by i; with a session id, the session's earlier requests come first as history.
func (s *Source) tracePrompt(i int, r *rand.Rand) Prompt {
	e := s.trace[i]
	p := Prompt{Text: s.traceText(i), InputTokens: e.in, OutputTokens: e.out}
	if !s.cfg.OutputTokens.IsZero() {
		p.OutputTokens = max(s.cfg.OutputTokens.Int(r), 1)
	}
	for _, j := range s.earlier[i] {
		prev := s.trace[j]
		p.History = append(p.History,
			Message{Role: "user", Text: s.traceText(j)},
			Message{Role: "assistant", Text: s.span(rand.New(rand.NewPCG(s.cfg.Seed^0xa55, Mix(uint64(j)))), prev.out, false)})
		p.InputTokens += prev.in + prev.out
	}
	return p
}

// traceText is the text of trace entry i's own input.
func (s *Source) traceText(i int) string {
	e := s.trace[i]
	if len(e.hashes) == 0 {
		return s.span(rand.New(rand.NewPCG(s.cfg.Seed^0x7ace, Mix(uint64(i)))), e.in, false)
	}
	var b strings.Builder
	left := e.in
	for _, h := range e.hashes {
		if left <= 0 {
			break
		}
		n := min(left, MooncakeBlock)
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.span(rand.New(rand.NewPCG(s.cfg.Seed^0xb10c, Mix(h))), n, b.Len() > 0))
		left -= n
	}
	if left > 0 { // more tokens than its blocks cover
		b.WriteByte(' ')
		b.WriteString(s.span(rand.New(rand.NewPCG(s.cfg.Seed^0x7ace, Mix(uint64(i)))), left, true))
	}
	return b.String()
}

// Arrivals returns when each request of a trace is due, from the first, in request order; nil
// for a workload that is not a trace. Load mode trace sends them at these times.
func (s *Source) Arrivals() []time.Duration {
	if len(s.trace) == 0 {
		return nil
	}
	out := make([]time.Duration, len(s.trace))
	for i, e := range s.trace {
		out[i] = e.at
	}
	return out
}
