package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/inferbench/inferbench/internal/base/inert"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/suite"
)

// view is the observer that keeps a server's live view (its Hub) and /metrics: LiveRun hands it
// the events of a run in its own process, and WatchResults those it reads from the folder of a run
// in another.
type view struct {
	hub     *Hub
	metrics *Metrics
}

// RunStarted shows a new run, named for its folder dir.
func (v view) RunStarted(_ context.Context, dir string) error {
	v.hub.Reset(filepath.Base(dir), time.Now(), 0)
	return nil
}

// MeasureStarted marks the scenario whose measured window just opened.
func (v view) MeasureStarted(sc *suite.Scenario) {
	v.hub.SetCurrent(sc.Benchmark.Name + "/" + sc.Name)
	v.metrics.Started(sc.Benchmark.Name, sc.Name)
}

// ScenarioFinished publishes a finished scenario.
func (v view) ScenarioFinished(r *result.Scenario) {
	v.hub.Add(r)
	v.metrics.Add(r)
}

// RunFinished publishes the finished run.
func (v view) RunFinished(_ context.Context, r *result.Run) error {
	v.hub.SetRun(r)
	v.hub.Finish()
	v.metrics.SetRun(r)
	return nil
}

// joined shows a run found under way or done (serve started after it): what it has so far, as
// the hub and, while it runs, the metrics would hold had they heard it from its start.
func (v view) joined(r *result.Run) {
	v.hub.SetRun(r)
	if r.Partial {
		v.metrics.SetRun(r)
	}
}

// WatchResults follows the newest run folder under root (root/latest, as `inferbench run`, `ab`
// and `merge` link it) and hands what it reads to the hub and the metrics as the run's events,
// as LiveRun does within the run's process. It returns when ctx is done.
func WatchResults(ctx context.Context, root string, every time.Duration, h *Hub, m *Metrics) {
	watchRun(ctx, func() string {
		if dir, err := filepath.EvalSymlinks(filepath.Join(root, result.LatestLink)); err == nil {
			return dir
		}
		return ""
	}, every, view{h, m})
}

// watchRun follows the run folder that dir returns, every so often: a folder seen for the first
// time is read once (its run.json and journal), then each scenario is an event as its line is
// appended to the journal (only what was appended is read), and the finished run one when the
// journal is gone (the run removes it after writing its final run.json). run.json is read
// again only when it changed and there is no journal to follow: the run finished (and the store
// gave it another id), or it was written by a version that kept none.
func watchRun(ctx context.Context, dir func() string, every time.Duration, v view) {
	var f *follower
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if d := dir(); d != "" && (f == nil || f.dir != d) {
			f = &follower{dir: d}
		}
		if f != nil {
			f.next(ctx, v)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// follower is what watchRun knows of the run folder it follows.
type follower struct {
	dir      string
	joined   bool
	done     bool            // the run finished: nothing more to read
	seen     map[string]bool // the ids of the scenarios handed on
	offset   int64           // the journal's bytes read
	lastMod  time.Time       // run.json's when last read
	lastSize int64
}

// next hands v what changed in the folder since the last call.
func (f *follower) next(ctx context.Context, v view) {
	runJSON := filepath.Join(f.dir, result.RunFile)
	fi, err := os.Stat(runJSON)
	if err != nil {
		return
	}
	if f.done {
		// A finished run's run.json is rewritten only when the store gave the run another id.
		if !fi.ModTime().Equal(f.lastMod) || fi.Size() != f.lastSize {
			if r, err := result.Load(runJSON); err == nil {
				f.lastMod, f.lastSize = fi.ModTime(), fi.Size()
				v.joined(r)
			}
		}
		return
	}
	journal := filepath.Join(f.dir, result.JournalFile)
	if !f.joined {
		// The journal's bytes before run.json is read are in what Load returns; a line
		// appended in between may be read again, and is then known by its id.
		jfi, jerr := os.Stat(journal)
		r, err := result.Load(runJSON)
		if err != nil {
			return // cut short, or half written: read again next time
		}
		f.joined, f.lastMod, f.lastSize = true, fi.ModTime(), fi.Size()
		if jerr == nil {
			f.offset = jfi.Size()
		}
		f.seen = make(map[string]bool, len(r.Scenarios))
		for i := range r.Scenarios {
			f.seen[key(&r.Scenarios[i])] = true
		}
		v.joined(r)
		f.done = !r.FinishedAt.IsZero()
		return
	}
	if f.readJournal(journal, v) {
		return
	}
	if fi.ModTime().Equal(f.lastMod) && fi.Size() == f.lastSize {
		return
	}
	r, err := result.Load(runJSON)
	if err != nil {
		return
	}
	f.lastMod, f.lastSize = fi.ModTime(), fi.Size()
	for i := range r.Scenarios {
		if s := &r.Scenarios[i]; !f.seen[key(s)] {
			f.seen[key(s)] = true
			v.ScenarioFinished(s)
		}
	}
	if !r.FinishedAt.IsZero() {
		f.done = true
		_ = v.RunFinished(ctx, r)
	}
}

// readJournal hands v the scenarios of the lines appended to the journal since the last read,
// and reports whether there is a journal. A line not yet whole is read next time; one that does
// not read as a scenario is passed over (result.Load reports it).
func (f *follower) readJournal(path string, v view) bool {
	j, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		return true
	}
	defer j.Close()
	if _, err := j.Seek(f.offset, io.SeekStart); err != nil {
		return true
	}
	data, err := io.ReadAll(j)
	if err != nil {
		return true
	}
	whole := bytes.LastIndexByte(data, '\n') + 1
	f.offset += int64(whole)
	for line := range bytes.Lines(data[:whole]) {
		var s result.Scenario
		if json.Unmarshal(line, &s) != nil || s.Benchmark == "" || f.seen[key(&s)] {
			continue
		}
		if (&result.Run{Scenarios: []result.Scenario{s}}).CheckValues() != nil {
			continue
		}
		s.Benchmark, s.Scenario = inert.Text(s.Benchmark), inert.Text(s.Scenario)
		f.seen[key(&s)] = true
		v.ScenarioFinished(&s)
	}
	return true
}

// key is a scenario's id with its names inert, as result.Load leaves run.json's (a journal's
// line is read as written).
func key(s *result.Scenario) string {
	return inert.Text(s.Benchmark) + "/" + inert.Text(s.Scenario)
}
