package result

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJournalReadBack: a run killed between two rewrites of run.json has the scenarios since the
// last one in its journal; Load adds those run.json lacks, in order, skips a last line cut short
// by the kill, refuses a corrupt line elsewhere naming the file and line, and leaves a finished
// run alone.
func TestJournalReadBack(t *testing.T) {
	sc := func(name string) Scenario {
		one := 1.0
		return Scenario{Benchmark: "b", Scenario: name, Status: StatusOK,
			Metrics: map[string]Metric{"throughput_ips": {Unit: "items/s", Better: "higher", Value: &one}, "latency_ms": {Unit: "ms", Better: "lower", Samples: []float64{1, 2}}}}
	}
	setup := func(t *testing.T, finished bool, lines ...string) string {
		dir := t.TempDir()
		r := &Run{Schema: Schema, ID: "20260101_000000-abcdefgh", Partial: true, StartedAt: time.Unix(1, 0).UTC(),
			Scenarios: []Scenario{sc("s0"), sc("s1")}}
		if finished {
			r.Partial, r.FinishedAt = false, time.Unix(2, 0).UTC()
		}
		r.Tally()
		if err := Save(dir, r); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, JournalFile), []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	line := func(name string) string {
		s := sc(name)
		b, err := json.Marshal(&s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	names := func(r *Run) string {
		var n []string
		for _, s := range r.Scenarios {
			n = append(n, s.Scenario)
		}
		return strings.Join(n, ",")
	}

	cut := line("s4")
	dir := setup(t, false, line("s0"), line("s1"), line("s2"), line("s3"), cut[:len(cut)/2])
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(r); got != "s0,s1,s2,s3" || r.Summary.Total != 4 || r.Summary.Succeeded != 4 || !r.Partial {
		t.Errorf("killed run: scenarios %s, summary %+v, partial %v; want s0..s3, 4 ok, partial", got, r.Summary, r.Partial)
	}

	dir = setup(t, false, line("s2"), "{not json\n", line("s3"))
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), JournalFile+":2:") {
		t.Errorf("corrupt middle line: %v, want an error naming %s:2", err, JournalFile)
	}

	dir = setup(t, true, line("s0"), line("s1"), line("s2"))
	if r, err := Load(dir); err != nil || names(r) != "s0,s1" {
		t.Errorf("finished run: %v, %v; want its own s0,s1 (the journal is only for runs that never finished)", r, err)
	}

	dir = setup(t, false, strings.Replace(line("s2"), `"samples":[1,2]`, `"samples":[1,-2]`, 1))
	if _, err := Load(dir); err == nil {
		t.Error("a journal line with a negative latency was accepted")
	}
}
