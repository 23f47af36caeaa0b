package serveimport

import (
	"fmt"
	"os"
	"time"

	"github.com/inferbench/inferbench/result"
)

// Options say how Read makes a run of a file.
type Options struct {
	Tool string    // VLLM, AIPerf, GuideLLM, LLMD; "" to recognise it (Detect)
	ID   string    // the run id
	Time time.Time // when the results were taken, for a file that does not say
	// Agent, when set, makes the run one of the agents that loaded one server together (the
	// files of several client machines): its scenarios keep the full-resolution histograms and
	// the window that `inferbench merge` combines exactly, as a run --agents run's do.
	Agent *result.AgentInfo
}

// reader reads one tool's file into scenarios; jsonl says the file is the tool's per-request
// records (AIPerf).
type reader func(path, name string, jsonl bool, o readOpts) ([]result.Scenario, Origin, error)

// readOpts are what a reader needs of Options: when the results were taken (for a file that does
// not say) and whether its parts keep full-resolution histograms (an agent's: Options.Agent).
type readOpts struct {
	at    time.Time
	hists bool
}

var readers = map[string]reader{VLLM: readVLLM, AIPerf: readAIPerf, GuideLLM: readGuideLLM, LLMD: readLLMD}

// Read reads the file at path (name in messages) as a run of the serving tool that wrote it. ok
// is false, with no error, when o.Tool is "" and the file is none of these tools' (the caller
// reads it as another format). An error in a recognised file is a *FileError naming the file,
// the tool and where.
func Read(path, name string, o Options) (r *result.Run, ok bool, err error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, false, err
	} else if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%s: not a regular file", name)
	}
	tool, jsonl := o.Tool, false
	if tool == "" || tool == AIPerf {
		t, l, err := Detect(path)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", name, err)
		}
		if tool == "" {
			tool = t
		}
		jsonl = l && tool == AIPerf
	}
	read, known := readers[tool]
	if !known {
		if o.Tool != "" {
			return nil, false, fmt.Errorf("--format %q: want %s, %s, %s or %s", o.Tool, VLLM, AIPerf, GuideLLM, LLMD)
		}
		return nil, false, nil
	}
	scs, origin, err := read(path, name, jsonl, readOpts{at: o.Time, hists: o.Agent != nil})
	if err != nil {
		return nil, true, err
	}
	if len(scs) == 0 {
		return nil, true, &FileError{File: name, Tool: tool, Err: fmt.Errorf("no benchmark in the file")}
	}
	origin.Tool, origin.File = tool, name
	r = &result.Run{Schema: result.Schema, ID: o.ID, Environment: map[string]any{"imported": origin.env()},
		Config: result.Config{Args: []string{"import", name}}, Scenarios: scs}
	for _, sc := range scs {
		if !sc.StartedAt.IsZero() && (r.StartedAt.IsZero() || sc.StartedAt.Before(r.StartedAt)) {
			r.StartedAt = sc.StartedAt
		}
		if end := sc.StartedAt.Add(time.Duration(sc.DurationS * 1e9)); end.After(r.FinishedAt) {
			r.FinishedAt = end
		}
	}
	if r.StartedAt.IsZero() {
		r.StartedAt, r.FinishedAt = o.Time, o.Time
	}
	r.Agent = o.Agent
	if err := r.CheckValues(); err != nil {
		return nil, true, &FileError{File: name, Tool: tool, Err: err}
	}
	r.Tally()
	return r, true, nil
}

// env is the origin as the run's environment keeps it ("imported").
func (o Origin) env() map[string]any {
	m := map[string]any{"tool": o.Tool, "file": o.File}
	if o.Version != "" {
		m["version"] = o.Version
	} else {
		m["version"] = "not recorded in the file"
	}
	if o.Command != "" {
		m["command"] = o.Command
	}
	if o.Producer != "" {
		m["producer"] = o.Producer
	}
	return m
}
