package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/suite"
)

// selection holds the flags that choose scenarios; run, list and validate share them.
type selection struct {
	filter     suite.Filter
	set        []string
	enableMock bool
	numTokens  uint   // --num-tokens-to-generate: max_new_tokens in every scenario
	modelID    string // --model-id: model_id in every scenario
}

// selectionFlags are the flags selection registers, in --help's order.
var selectionFlags = []string{"include", "exclude", "category", "tag", "model", "model-id", "set", "enable-mock", "num-tokens-to-generate"}

func (s *selection) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&s.filter.Include, "include", nil, "run only benchmarks or scenarios matching this glob (* matches across /) or bare name (a benchmark name or a part of it between . and /, else a file name without extension); repeatable")
	f.StringArrayVar(&s.filter.Exclude, "exclude", nil, "skip benchmarks or scenarios matching this glob (repeatable)")
	f.StringSliceVar(&s.filter.Category, "category", nil, "only these categories: unit, integration, performance")
	f.StringSliceVar(&s.filter.Model, "model", nil, "only benchmarks whose model matches this glob; in quick runs (--exec, --openai, --framework) the model to use")
	f.StringSliceVar(&s.filter.Tag, "tag", nil, "only benchmarks with one of these tags")
	f.StringArrayVar(&s.set, "set", nil, "override a parameter in every scenario: --set batch_size=4 (repeatable)")
	f.BoolVar(&s.enableMock, "enable-mock", false, "run definitions whose subject is the simulated mock model")
	f.UintVar(&s.numTokens, "num-tokens-to-generate", 0, "tokens to generate per call in generation benchmarks: max_new_tokens=N in every scenario (mock, torch_llm, OpenAI servers)")
	f.StringVar(&s.modelID, "model-id", "", "the model to benchmark: model_id=ID in every scenario (torch_llm loads these weights from a local directory or the local Hugging Face cache, never downloading; Python benchmarks read config.model_id; OpenAI servers are asked for this model)")
}

// selection returns the run.Selection of the flags and the PATH arguments.
func (s *selection) selection(o *IO, args []string) run.Selection {
	return run.Selection{Paths: args, Funcs: o.Funcs, Filter: s.filter, Set: s.set, EnableMock: s.enableMock, GenerateTokens: int(s.numTokens), ModelID: localModel(env(o), s.modelID)}
}

// noteUnread names, on stderr, the YAML files in a benchmarks folder below the PATH arguments
// (or the working directory) that discovery does not read (suite.Unread), with where a
// definition goes: a file there is never passed over without a line saying so.
func noteUnread(o *IO, args []string) {
	roots := []string{env(o).WorkDir()}
	if len(args) > 0 {
		roots = roots[:0]
		for _, a := range args {
			roots = append(roots, env(o).Path(a))
		}
	}
	for _, f := range suite.Unread(roots...) {
		shown := f
		if rel, err := filepath.Rel(env(o).WorkDir(), f); err == nil && !strings.HasPrefix(rel, "..") {
			shown = rel
		}
		fmt.Fprintf(o.Stderr, "inferbench: note: %s is not read: a definition in a benchmarks folder goes in benchmarks/{unit,integration,performance}/ (or a benches/ folder); to read this one, name it: inferbench run %s\n", shown, shown)
	}
}

// localModel returns a --model-id that names a local folder or file relative to the working
// directory (./my-tiny-llama, or a name that exists there) as an absolute path: a benchmark runs
// in its definition's folder, where the user's relative path would name something else. Other
// ids (a Hugging Face org/name that is no local path) are returned as written.
func localModel(e run.Env, id string) string {
	if id == "" || filepath.IsAbs(id) {
		return id
	}
	p := e.Path(id)
	_, err := os.Stat(p)
	if err != nil && !strings.HasPrefix(id, "./") && !strings.HasPrefix(id, "../") {
		return id
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// env is the run.Env of a command.
func env(o *IO) run.Env { return run.Env{Dir: o.Dir, Vars: o.Env} }
