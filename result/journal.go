package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/inferbench/inferbench/internal/base/readall"
)

// JournalFile is the run folder's journal of finished scenarios while a run lasts: one scenario
// per line, appended as each finishes. run.json is rewritten whole only from time to time (each
// rewrite costs the whole run's size, so a rewrite per scenario made a run of thousands of fast
// scenarios quadratic); the journal keeps every scenario in between at the cost of its own line.
// Load reads it back into a run that never finished, and the run removes it once its final
// run.json is written.
const JournalFile = "scenarios.journal.jsonl"

// AddJournal adds to r, read from the run.json in dir, the scenarios of the journal in dir that
// run.json lacks (those finished after its last rewrite), in their order, when the run never
// finished; a finished run is left as it is. A last line cut short
// by the kill is skipped; any other line that does not read is an error naming the file and line.
func AddJournal(dir string, r *Run) error {
	path, data, err := readJournal(dir, r)
	if path == "" || err != nil {
		return err
	}
	return addJournal(path, data, r)
}

// readJournal reads the journal in dir for the run r, read from the run.json in dir: its path and
// bytes, or an empty path when there is none to read (the run finished, so its run.json is
// whole, or it has no journal).
func readJournal(dir string, r *Run) (string, []byte, error) {
	if !r.FinishedAt.IsZero() {
		return "", nil, nil
	}
	path := filepath.Join(dir, JournalFile)
	data, err := readall.File(path, readall.RunLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	return path, data, nil
}

// addJournal is AddJournal on the journal's bytes, data, read from path. On an error r is left
// as it was.
func addJournal(path string, data []byte, r *Run) error {
	have := make(map[string]bool, len(r.Scenarios))
	for i := range r.Scenarios {
		have[r.Scenarios[i].ID()] = true
	}
	added, err := journalScenarios(path, data, have)
	if err != nil {
		return err
	}
	if len(added) == 0 {
		return nil
	}
	all := *r
	all.Scenarios = append(slices.Clip(r.Scenarios), added...)
	if err := all.CheckValues(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	r.Scenarios = all.Scenarios
	r.Tally()
	return nil
}

// journalScenarios returns the scenarios of the journal's bytes, data, read from path, whose ids
// are not in have (adding them), in their order.
func journalScenarios(path string, data []byte, have map[string]bool) ([]Scenario, error) {
	var added []Scenario
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var s Scenario
		err := json.Unmarshal(line, &s)
		if err == nil && s.Benchmark == "" {
			err = errors.New("no benchmark named") // null, {}: Journal.Add writes no such line
		}
		if err != nil {
			if data[len(data)-1] != '\n' && bytes.HasSuffix(data, line) {
				break // the last line, cut short by the kill
			}
			return nil, fmt.Errorf("%s:%d: corrupt journal line: %w", path, n, err)
		}
		if !have[s.ID()] {
			have[s.ID()] = true
			added = append(added, s)
		}
	}
	return added, nil
}
