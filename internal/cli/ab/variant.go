package ab

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/quick"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// Spec says how to find the variants of `inferbench ab A B`.
type Spec struct {
	// Benchmarks are the discovered definitions, for variants named "BENCHMARK/SCENARIO" (or a
	// benchmark with one scenario). They are only read when such a variant is asked for; nil
	// means none.
	Benchmarks func() ([]*suite.Benchmark, error)
	// Set overrides parameters of definition variants (--set), as run does.
	Set map[string]any
	// Check returns why a scenario cannot run here ("" when it can): unmet requirements.
	Check func(*suite.Scenario) string
	// Dir is the working directory of exec: variants; Env the environment of the subjects.
	Dir string
	Env []string
	// ExecMetrics reads a JSON object of metrics from an exec: variant's last stdout line.
	ExecMetrics bool
	// Model is the model an openai: variant asks for.
	Model string
}

// Variant is one side, resolved: the scenario to open and its load settings.
type Variant struct {
	Name     string
	Scenario *suite.Scenario
}

// Resolve finds a variant from its name:
//   - "exec:COMMAND": a command (two builds are two commands), split like a shell, run without one;
//   - "openai:URL": an OpenAI-compatible server (two servers are two URLs), asked for Spec.Model;
//   - "BENCHMARK/SCENARIO": a scenario of a definition ("resnet/variant=compiled"), or
//     "BENCHMARK" when the benchmark has one scenario.
func (s Spec) Resolve(name string) (*Variant, error) {
	var bs []*suite.Benchmark
	var err error
	switch {
	case strings.HasPrefix(name, "exec:"):
		bs, err = quick.Exec{Command: strings.TrimPrefix(name, "exec:"), Name: "exec", Metrics: s.ExecMetrics, Dir: s.Dir}.Benchmarks()
	case strings.HasPrefix(name, "openai:"):
		bs, err = quick.OpenAI{URL: strings.TrimPrefix(name, "openai:"), Model: s.Model, Dir: s.Dir}.Benchmarks()
	default:
		return s.fromDefinitions(name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	scs := bs[0].Expand(nil)
	return &Variant{Name: name, Scenario: scs[0]}, nil
}

func (s Spec) fromDefinitions(name string) (*Variant, error) {
	if s.Benchmarks == nil {
		return nil, fmt.Errorf("%s: no benchmark definitions; name a variant exec:COMMAND, openai:URL or BENCHMARK/SCENARIO", name)
	}
	bs, err := s.Benchmarks()
	if err != nil {
		return nil, err
	}
	bench, scen, _ := strings.Cut(name, "/")
	var known []string
	for _, b := range bs {
		if b.Name != bench {
			continue
		}
		scs := b.Expand(s.Set)
		for _, sc := range scs {
			known = append(known, sc.ID())
			if sc.Name == scen || (scen == "" && len(scs) == 1) {
				if sc.Skip != "" {
					return nil, fmt.Errorf("%s: skipped by its definition: %s", name, sc.Skip)
				}
				if s.Check != nil {
					if why := s.Check(sc); why != "" {
						return nil, fmt.Errorf("%s: cannot run here: %s", name, why)
					}
				}
				if b.Server != nil {
					return nil, fmt.Errorf("%s: its definition starts a server, which ab does not do: start it and name the variant openai:URL", name)
				}
				return &Variant{Name: name, Scenario: sc}, nil
			}
		}
	}
	if len(known) == 0 {
		return nil, fmt.Errorf("%s: no benchmark %q in the definitions (inferbench list shows them)", name, bench)
	}
	return nil, fmt.Errorf("%s: no such scenario; %s has %s", name, bench, strings.Join(known, ", "))
}

// Open opens the variant's subject with its scenario's parameters, and returns it with the load
// settings of its definition (the timeout of a call).
func (v *Variant) Open(ctx context.Context, s Spec) (subject.Subject, load.Config, error) {
	b := v.Scenario.Benchmark
	kind, ok := subject.Lookup(b.Kind)
	if !ok {
		return nil, load.Config{}, fmt.Errorf("%s: unknown subject kind %q", v.Name, b.Kind)
	}
	cfg := b.Load.WithParams(v.Scenario.Params) // ab calls one at a time, in blocks: only the timeout is used
	subj, err := kind.Open(ctx, subject.Spec{Benchmark: b.Name, Scenario: v.Scenario.Name, Dir: b.Dir, Config: b.Config,
		Params: maps.Clone(v.Scenario.Params), Env: s.Env})
	if err != nil {
		var skip interface{ SkipReason() string }
		if errors.As(err, &skip) && skip.SkipReason() != "" {
			return nil, load.Config{}, fmt.Errorf("%s: cannot run here: %s", v.Name, skip.SkipReason())
		}
		return nil, load.Config{}, fmt.Errorf("%s: open %s subject: %w", v.Name, b.Kind, err)
	}
	return subj, cfg, nil
}
