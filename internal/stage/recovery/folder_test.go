package recovery

import (
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
)

// TestJournalAdd: what Add writes reads back.
func TestJournalAdd(t *testing.T) {
	dir := t.TempDir()
	r := &result.Run{Schema: result.Schema, ID: "20260101_000000-abcdefgh", Partial: true, StartedAt: time.Unix(1, 0).UTC(), Scenarios: []result.Scenario{}}
	if err := result.Save(dir, r); err != nil {
		t.Fatal(err)
	}
	j, err := OpenJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		if err := j.Add(&result.Scenario{Benchmark: "x", Scenario: name, Status: result.StatusFailed, Error: "boom\nline"}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	got, err := result.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Scenarios) != 3 || got.Scenarios[2].Scenario != "c" || got.Summary.Failed != 3 || got.Scenarios[0].Error != "boom\nline" {
		t.Errorf("read back %+v", got.Scenarios)
	}
}
