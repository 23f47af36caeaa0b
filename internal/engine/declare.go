package engine

import (
	"maps"
	"slices"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// declare records the units and directions declared where the metrics were produced: first what
// the subject learned (a worker's reply, a command's JSON line), then the definition's metrics:
// block, which wins. A bad declaration is a warning on the scenario; the metric keeps the
// catalogue's (or its name's) direction.
func declare(r *result.Scenario, subj subject.Subject, defined map[string]subject.MetricInfo) {
	apply := func(decls map[string]subject.MetricInfo, from string) {
		for _, name := range slices.Sorted(maps.Keys(decls)) {
			d := decls[name]
			if err := r.Declare(name, d.Unit, d.Better); err != nil {
				r.Warnings = append(r.Warnings, from+": "+err.Error())
			}
		}
	}
	if d, ok := subj.(subject.Declarer); ok {
		apply(d.Declared(), "the subject's metric declaration")
	}
	apply(defined, "the definition's metrics: block")
}
