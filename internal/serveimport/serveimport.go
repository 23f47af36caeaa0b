// Package serveimport reads the saved results of other LLM serving benchmarks (vLLM's
// `bench serve --save-result`, AIPerf's profile export, guidellm's benchmarks.json, llm-d's
// benchmark report) as inferbench runs, and computes a run's figures by those tools' definitions
// (As, for `report --report-as`).
//
// A file is recognised by its content, never its name (Detect). Where the file keeps each
// request's timestamps, the requests are fed one at a time to the same derivation an inferbench
// run uses (internal/figures), so ttft_ms, itl_ms, tpot_ms, e2e_ms and the rates are inferbench's
// own; the tool's own aggregates are kept beside them, under the tool's names, in the scenario's
// "imported" section, and the run's environment says where it came from (tool, version, command).
// Files are read as streams (json.Decoder tokens, jsonl a line at a time): what is held is one
// request and the bounded distributions, never the file.
package serveimport

import (
	"errors"
	"fmt"
	"time"
)

// Tool names, as --format and --report-as take them.
const (
	VLLM     = "vllm"
	AIPerf   = "aiperf"
	GuideLLM = "guidellm"
	LLMD     = "llm-d"
)

// Request is one request as another tool recorded it: times relative to its send, the tool's
// token counts and its error.
type Request struct {
	Start time.Time // the send; a tool that keeps a monotonic clock only is placed on the file's date
	// FirstToken is the first content chunk's arrival after Start; 0 when the request streamed
	// no token (or failed).
	FirstToken time.Duration
	// Chunks are the arrivals of every content chunk after Start (Chunks[0] == FirstToken), when
	// the tool kept them; nil otherwise.
	Chunks []time.Duration
	// Tokens are the tokens each chunk carried, when known (inferbench's own log); nil: one each.
	Tokens []int
	// LastToken is the last content chunk's arrival after Start, when the tool kept it but not
	// every chunk (guidellm); 0 otherwise.
	LastToken time.Duration
	// End is the end of the response after Start: the last byte the tool saw (vLLM: the last
	// content chunk, all it keeps).
	End                       time.Duration
	InputTokens, OutputTokens int
	Err                       string // a failed request's error; "" for a success
}

// Origin says where an imported run came from: the run's environment keeps it.
type Origin struct {
	Tool    string // VLLM, AIPerf, GuideLLM, LLMD
	Version string // the tool's version, when the file says it
	Command string // the command line, when the file records it
	File    string
	// Producer is, for an llm-d report, the workload generator whose results it converted.
	Producer string
}

// ErrUnknown is the error, wrapped with the file's name and what was looked for, of a file
// no reader recognises.
var ErrUnknown = errors.New("not a result file of a serving tool inferbench imports")

// FileError is an error in a file of a recognised tool: the file, the tool and where (a line of
// a jsonl file, a key path of a JSON or YAML document).
type FileError struct {
	File  string
	Tool  string
	Where string // "line 12", "key benchmarks[0].requests.successful[3]", ...
	Err   error
}

func (e *FileError) Error() string {
	if e.Where == "" {
		return fmt.Sprintf("%s: %s results: %v", e.File, e.Tool, e.Err)
	}
	return fmt.Sprintf("%s: %s results: %s: %v", e.File, e.Tool, e.Where, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// Formats are the tools Detect recognises, in the order it tries them.
var Formats = []string{VLLM, AIPerf, GuideLLM, LLMD}
