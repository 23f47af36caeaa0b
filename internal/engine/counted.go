package engine

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// This file holds instruction mode's part of the engine: a scenario measured with `measure:
// instructions` (or --measure instructions) is opened with Spec.Measure set, its subject counts
// each call under valgrind's callgrind, and the engine records what the counts depend on
// (Scenario.Counted) and the callgrind files the subject kept (Scenario.Profiles).

// WithMeasure overrides every definition's `measure:` ("" keeps them; "instructions" counts
// every scenario).
func WithMeasure(m string) Option { return func(e *Engine) { e.measure = m } }

// WithCountProfiles sets the folder under which counted scenarios keep their callgrind files,
// one folder per scenario (the run folder's profiles/); "" keeps none. A relative dir is made
// absolute here: a subject runs in its definition's folder, not in the run's.
func WithCountProfiles(dir string) Option {
	return func(e *Engine) {
		if abs, err := filepath.Abs(dir); err == nil && dir != "" {
			dir = abs
		}
		e.countDir = dir
	}
}

// countable sets spec's measure for sc and returns why the scenario cannot run so measured ("" when
// it can).
func (e *Engine) countable(sc *suite.Scenario, kind subject.Kind, spec *subject.Spec) string {
	m := sc.Benchmark.Measure
	if e.measure != "" {
		m = e.measure
	}
	if m != subject.MeasureInstructions {
		return ""
	}
	if !kind.Instructions {
		return fmt.Sprintf("measure instructions: the %s subject cannot be counted under valgrind (commands, Go functions and the Python worker can); measure it in time (no --measure instructions, or measure: time in %s)", kind.Name, sc.Benchmark.Source())
	}
	spec.Measure = m
	if e.redact != nil {
		spec.Redact = e.redact.String // the command line in the callgrind files kept
	}
	if e.countDir != "" {
		spec.ProfileDir = filepath.Join(e.countDir, scenarioFileBase(sc))
	}
	return ""
}

// counted records what a counted subject counted with and the callgrind files it kept, relative
// to the run folder (the profiles folder's parent).
func (e *Engine) counted(subj subject.Subject, r *result.Scenario) {
	c, ok := subj.(subject.Counter)
	if !ok {
		return
	}
	r.Counted = c.Identity()
	base, _ := filepath.Abs(filepath.Dir(e.countDir))
	for _, f := range c.Kept() {
		if abs, err := filepath.Abs(f); err == nil {
			if rel, err := filepath.Rel(base, abs); err == nil && !strings.HasPrefix(rel, "..") {
				f = filepath.ToSlash(rel)
			}
		}
		r.Profiles = append(r.Profiles, f)
	}
}
