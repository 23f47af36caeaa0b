package engine

import (
	"encoding/json"
	"strings"

	"github.com/inferbench/inferbench/subject"
)

// jsonText is v as compact JSON for a debug record ("" when it cannot be encoded).
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// abilities names the optional abilities a subject has, for the debug record of its opening.
func abilities(s subject.Subject) string {
	var out []string
	add := func(ok bool, name string) {
		if ok {
			out = append(out, name)
		}
	}
	_, ok := s.(subject.Batcher)
	add(ok, "batches")
	_, ok = s.(subject.Sequential)
	add(ok, "one-at-a-time")
	_, ok = s.(subject.Processes)
	add(ok, "processes")
	_, ok = s.(subject.Profiler)
	add(ok, "profiler")
	_, ok = s.(subject.Setup)
	add(ok, "setup-figures")
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ",")
}
