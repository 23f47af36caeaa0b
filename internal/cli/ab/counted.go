package ab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/internal/base/gitref"
	"github.com/inferbench/inferbench/internal/base/tail"
	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/suite"
)

// This file holds `run --baseline-ref REF --measure instructions`: both sides counted under
// valgrind's callgrind. A count does not move with the machine, so there is nothing to
// interleave: each side is counted once, the ref's then the working tree's, and the two are
// compared as compare compares two runs of instruction mode (an exact verdict, compare's count
// threshold, refused across counting identities).

// counted reports whether the pair is counted: --measure instructions, or its definition's
// measure: instructions without --measure.
func counted(o RefOptions, p pairing) bool {
	if o.Run.Measure != "" {
		return o.Run.Measure == "instructions"
	}
	return p.b.Benchmark.Measure == "instructions"
}

func anyCounted(o RefOptions, ps []pairing) bool {
	for _, p := range ps {
		if counted(o, p) {
			return true
		}
	}
	return false
}

// mergeReports adds the counted scenarios' comparison (c) to the timed ones' (t).
func mergeReports(t, c *compare.Report) *compare.Report {
	if len(t.Rows) == 0 {
		t.Old, t.New, t.Alpha = c.Old, c.New, c.Alpha
	}
	t.Rows = append(t.Rows, c.Rows...)
	t.Regressions += c.Regressions
	t.Improvements += c.Improvements
	t.Info += c.Info
	t.Unverified += c.Unverified
	t.Warnings = append(t.Warnings, c.Warnings...)
	if t.NoEvidence != "" && len(c.Rows) > 0 {
		t.NoEvidence = ""
	}
	return t
}

// countPair counts the two sides of one scenario and returns the working tree's result with a
// "baseline_ref" section that holds the ref's.
func countPair(ctx context.Context, o RefOptions, p pairing, wt *gitref.Worktree, procs *procSides, env run.Env, red *redact.Redactor, dir string) (result.Scenario, error) {
	if p.skip != "" {
		b := p.b.Benchmark
		return result.Scenario{Benchmark: b.Name, Scenario: p.b.Name, Category: b.Category, Model: p.b.Model(), Subject: b.Kind,
			Params: map[string]any(p.b.Params), Status: result.StatusSkipped, SkipReason: p.skip}, nil
	}
	var sides [2]result.Scenario
	for v, s := range []*suite.Scenario{p.a, p.b} {
		var err error
		if s.Benchmark.Kind == "gofunc" {
			sides[v], err = procs.count(ctx, s, v, o.Run.Load.MeasurementIterations)
		} else {
			profiles := filepath.Join(dir, "profiles")
			if v == 0 {
				profiles = filepath.Join(dir, "profiles", SectionBaselineRef)
			}
			sides[v], err = countHere(ctx, o, s, env, red, profiles)
		}
		if err != nil {
			sc := sides[v]
			sc.Benchmark, sc.Scenario, sc.Status = p.b.Benchmark.Name, p.b.Name, result.StatusFailed
			side := [2]string{"at " + wt.Ref, "in the working tree"}[v]
			return sc, fmt.Errorf("counted %s: %w", side, err)
		}
	}
	sc := sides[1]
	base := sides[0]
	sec := RefSection{Ref: wt.Ref, Commit: wt.Commit, Counted: &base}
	if m, ok := base.Metrics["instructions"]; ok {
		sec.Baseline = m
	}
	raw, err := finite.Marshal(sec)
	if err != nil {
		return sc, err
	}
	if sc.Extra.Other == nil {
		sc.Extra.Other = map[string]json.RawMessage{}
	}
	sc.Extra.Other[SectionBaselineRef] = raw
	if base.Status == result.StatusFailed && sc.Status != result.StatusFailed {
		sc.Status, sc.Error = result.StatusFailed, fmt.Sprintf("counted at %s: %s", wt.Ref, base.Error)
	}
	return sc, nil
}

// countHere counts scenario s with this process's engine, its callgrind files under profiles.
func countHere(ctx context.Context, o RefOptions, s *suite.Scenario, env run.Env, red *redact.Redactor, profiles string) (result.Scenario, error) {
	eng := engine.New(engine.WithLoad(o.Run.Load), engine.WithEnv(env.Vars), engine.WithRedactor(red),
		engine.WithMeasure("instructions"), engine.WithCountProfiles(profiles), engine.WithChecker(checker(o.Run.Selection, env)))
	var got []result.Scenario
	if err := eng.Run(ctx, []*suite.Scenario{s}, func(r result.Scenario) { got = append(got, r) }); err != nil {
		return result.Scenario{}, err
	}
	if len(got) != 1 {
		return result.Scenario{}, fmt.Errorf("%s: the engine returned %d results", s.ID(), len(got))
	}
	return got[0], nil
}

// count counts scenario s on side v as one `run --measure instructions` of that side's binary.
func (p *procSides) count(ctx context.Context, s *suite.Scenario, v int, iterations *int) (result.Scenario, error) {
	side := [2]string{"at " + p.ref, "in the working tree"}[v]
	args := []string{"run", "--include", globQuote(s.ID()), "--measure", "instructions", "--output-dir", filepath.Join(p.out, fmt.Sprint(v))}
	if iterations != nil {
		args = append(args, "--measurement-iterations", fmt.Sprint(*iterations))
	}
	cmd := exec.CommandContext(ctx, p.bin[v], append(args, p.args...)...)
	cmd.Dir, cmd.Env = p.dir[v], p.env
	cmd.WaitDelay = 5 * time.Second
	var stdout bytes.Buffer
	stderr := &tail.Buffer{Max: 4096}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return result.Scenario{}, ctx.Err()
	}
	r, err := result.Decode(stdout.Bytes(), p.bin[v])
	if err != nil {
		return result.Scenario{}, fmt.Errorf("%s: %s run %s: %v: %s", s.ID(), filepath.Base(p.bin[v]), side, runErr, strings.TrimSpace(stderr.String()))
	}
	for _, sc := range r.Scenarios {
		if sc.ID() == s.ID() {
			return sc, nil
		}
	}
	return result.Scenario{}, fmt.Errorf("%s is not a scenario of the benchmark binary %s: %s", s.ID(), side, strings.TrimSpace(stderr.String()))
}

// countReport compares the counted sides of r's scenarios as compare compares two runs.
func countReport(r *result.Run, wt *gitref.Worktree, o RefOptions) *compare.Report {
	old := &result.Run{ID: wt.Ref, Schema: r.Schema, Environment: r.Environment}
	nw := &result.Run{ID: r.ID, Schema: r.Schema, Environment: r.Environment, StartedAt: r.StartedAt}
	for _, sc := range r.Scenarios {
		raw, ok := sc.Extra.Other[SectionBaselineRef]
		if !ok {
			continue
		}
		var sec RefSection
		if json.Unmarshal(raw, &sec) != nil || sec.Counted == nil {
			continue
		}
		old.Scenarios = append(old.Scenarios, *sec.Counted)
		nw.Scenarios = append(nw.Scenarios, sc)
	}
	old.Tally()
	nw.Tally()
	rep := compare.Runs(old, nw, o.Run.Compare)
	rep.Old = compare.RunRef{ID: wt.Ref, Commit: wt.Commit}
	rep.New = compare.RunRef{ID: r.ID, Label: "working tree", StartedAt: r.StartedAt, Commit: wt.Head}
	if wt.Dirty {
		rep.New.Label = "working tree, with uncommitted changes"
	}
	return rep
}
