package serveimport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// logLine is one line of an inferbench run's request log (requests/<scenario>.jsonl, written by
// internal/engine's requestLog).
type logLine struct {
	Phase        string  `json:"phase"`
	Start        int64   `json:"start_ns"`
	FirstToken   int64   `json:"first_token_ns"`
	End          int64   `json:"end_ns"`
	TokenUS      []int64 `json:"token_us"`
	Tokens       []int   `json:"tokens"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	Error        string  `json:"error"`
}

// ReadRequestLog feeds the measured requests of an inferbench request log to a Calc, a line at a
// time: the figures of `--report-as` for a run of inferbench's own.
func ReadRequestLog(path string) (*Calc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := NewCalc()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), aiperfLineLimit)
	for line := 1; sc.Scan(); line++ {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, &FileError{File: path, Tool: "inferbench request log", Where: fmt.Sprintf("line %d", line), Err: err}
		}
		if l.Phase != "measure" {
			continue
		}
		r := Request{Start: time.Unix(0, l.Start), End: time.Duration(l.End - l.Start), InputTokens: l.InputTokens, OutputTokens: l.OutputTokens, Err: l.Error}
		if l.FirstToken > 0 {
			r.FirstToken = time.Duration(l.FirstToken - l.Start)
		}
		for _, us := range l.TokenUS {
			r.Chunks = append(r.Chunks, time.Duration(us)*time.Microsecond)
		}
		r.Tokens = l.Tokens
		if err := r.check(); err != nil {
			return nil, &FileError{File: path, Tool: "inferbench request log", Where: fmt.Sprintf("line %d", line), Err: err}
		}
		c.Add(r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}
