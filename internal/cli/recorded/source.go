// Package recorded is what the commands that read recorded runs do with them: find one by reference
// (a run folder or run.json, a run id, latest, baseline:NAME), compare two (Source.Compare),
// render one (Report), export one in another tool's format (Export), name a baseline
// (SetBaseline), and record other tools' results in the history store (Import).
package recorded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/atomicfile"
	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/internal/stage/recovery"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/store"
)

// Source finds runs by reference, for the commands that read them (compare, report, export,
// baseline): a run.json or run folder; a run id in ResultsDir; "latest", "baseline:NAME" or a run
// id in the history store, which is opened when first needed. Close closes it.
type Source struct {
	Env        run.Env
	Store      string // the store's location, as run.Options.Store
	ResultsDir string // folder of run folders, searched before the store ("" for none)
	st         store.Store
}

// OpenStore returns the history store, opening it on first use.
func (rs *Source) OpenStore(ctx context.Context) (store.Store, error) {
	if rs.st == nil {
		st, err := run.OpenStore(ctx, rs.Store, rs.Env)
		if err != nil {
			return nil, err
		}
		rs.st = st
	}
	return rs.st, nil
}

// Close closes the store if it was opened.
func (rs *Source) Close() error {
	if rs.st == nil {
		return nil
	}
	return rs.st.Close()
}

// Load returns the run ref names, with its text redacted (a run recorded by an older version
// may hold a secret).
func (rs *Source) Load(ctx context.Context, ref string) (*result.Run, error) {
	r, err := rs.find(ctx, ref)
	redact.Run(r)
	return r, err
}

// find returns the run ref names, as it was recorded.
func (rs *Source) find(ctx context.Context, ref string) (*result.Run, error) {
	isStoreRef := ref == result.LatestLink || strings.HasPrefix(ref, "baseline:")
	if !isStoreRef {
		if _, err := os.Stat(rs.Env.Path(ref)); err == nil {
			return result.Load(rs.Env.Path(ref))
		}
		if rs.ResultsDir != "" && !strings.ContainsAny(ref, `/\`) {
			p := filepath.Join(rs.Env.Path(rs.ResultsDir), ref)
			if _, err := os.Stat(filepath.Join(p, result.RunFile)); err == nil {
				return result.Load(p)
			}
		}
	}
	st, err := rs.OpenStore(ctx)
	if err != nil {
		return nil, err
	}
	r, err := store.Resolve(ctx, st, ref)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%s: %w (want a run.json, a run folder, a run id, latest or baseline:NAME)", ref, err)
	}
	return r, err
}

// Path returns the run folder or run.json that ref names on disk: a path, or "latest" (the
// default) or a run id under ResultsDir. A ref found nowhere is a usage error.
func (rs *Source) Path(ref string) (string, error) {
	if ref == "" {
		ref = result.LatestLink
	}
	if _, err := os.Stat(rs.Env.Path(ref)); err == nil && ref != result.LatestLink {
		return rs.Env.Path(ref), nil
	}
	p := filepath.Join(rs.Env.Path(rs.ResultsDir), ref)
	if _, err := os.Stat(p); err != nil {
		return "", exit.UsageError(fmt.Errorf("run %q: not a run folder, a run.json, nor a run under %s (see --results-dir)", ref, rs.ResultsDir))
	}
	return p, nil
}

// LoadFolder returns the run ref names, redacted as Load's, and its run folder on disk: a path,
// or "latest" (the default) or a run id under ResultsDir; else a run id, latest or
// baseline:NAME from the history store, whose folder is its run's under ResultsDir when that
// folder holds the same run, else "" (it has none here). A path found nowhere is a usage error.
func (rs *Source) LoadFolder(ctx context.Context, ref string) (r *result.Run, dir string, err error) {
	path, err := rs.Path(ref)
	switch {
	case err == nil:
		if r, err = result.Load(path); err != nil {
			return nil, "", err
		}
		dir = path
		if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
			dir = filepath.Dir(path)
		}
	case !strings.HasPrefix(ref, "baseline:") && ref != "" && ref != result.LatestLink && strings.ContainsAny(ref, `/\`):
		return nil, "", err
	default:
		if ref == "" {
			ref = result.LatestLink
		}
		if r, err = rs.find(ctx, ref); err != nil {
			return nil, "", err
		}
		dir = rs.folderOf(r)
	}
	redact.Run(r) // a run recorded by an older version may hold a secret
	return r, dir, nil
}

// folderOf is the folder under ResultsDir that holds the stored run r (its profiles, its
// callgrind files): the run's id as a folder whose run.json is the same run; "" when there is
// none.
func (rs *Source) folderOf(r *result.Run) string {
	if rs.ResultsDir == "" || r == nil || r.ID == "" || strings.ContainsAny(r.ID, `/\`) || r.ID == "." || r.ID == ".." {
		return ""
	}
	dir := filepath.Join(rs.Env.Path(rs.ResultsDir), r.ID)
	on, err := result.Load(dir)
	if err != nil || on.ID != r.ID || !on.StartedAt.Equal(r.StartedAt) {
		return ""
	}
	return dir
}

// Report renders the run ref names as "html", "text" (the table) or "json". With output "-" (or
// empty, for text and json) it writes to w and returns ""; else it writes the file output, by default the
// run folder's report.html (report-ID.html in the working directory for a run only in the
// store), and returns its path.
func (rs *Source) Report(ctx context.Context, ref, format, output string, w io.Writer) (string, error) {
	switch format {
	case "html", "text", "json":
	default:
		return "", exit.UsageError(fmt.Errorf("--format %q: want html, text or json", format))
	}
	r, dir, err := rs.LoadFolder(ctx, ref)
	if err != nil {
		return "", err
	}
	if dir == "" && output == "" && format == "html" {
		output = "report-" + r.ID + ".html"
	}
	var buf bytes.Buffer
	switch format {
	case "html":
		err = report.RunHTML(&buf, r, report.HTMLOptions{})
	case "text":
		err = report.Table(&buf, r)
	case "json":
		err = result.WriteJSON(&buf, r)
	}
	if err != nil {
		return "", fmt.Errorf("render %s: %w", ref, err)
	}
	switch {
	case output == "-" || output == "" && format != "html":
		_, err = w.Write(buf.Bytes())
		return "", err
	case output == "":
		output = filepath.Join(dir, recovery.ReportFile)
	default:
		output = rs.Env.Path(output)
	}
	if err := atomicfile.WriteFile(output, buf.Bytes()); err != nil {
		return "", fmt.Errorf("write %s: %w", output, err)
	}
	return output, nil
}

// SetBaseline names the run ref names as the baseline name (recording it in the store first when
// it is only on disk) and returns the run.
func (rs *Source) SetBaseline(ctx context.Context, name, ref, note string) (*result.Run, error) {
	r, err := rs.Load(ctx, ref)
	if err != nil {
		return nil, err
	}
	st, err := rs.OpenStore(ctx)
	if err != nil {
		return nil, err
	}
	stored, err := st.Get(ctx, r.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		err = st.Put(ctx, r)
	case err == nil && !sameRun(stored, r):
		// Another run holds this id (an old per-second id, another host): record this one
		// under a new id rather than point the baseline at the wrong run.
		err = recovery.PutNew(ctx, st, r)
	}
	if err != nil {
		return nil, err
	}
	return r, st.SetBaseline(ctx, store.Baseline{Name: name, RunID: r.ID, Note: note, CreatedAt: time.Now()})
}

// sameRun reports whether a stored run and a run read from a file are the same run: the same
// start and the same scenarios.
func sameRun(a, b *result.Run) bool {
	if !a.StartedAt.Truncate(time.Microsecond).Equal(b.StartedAt.Truncate(time.Microsecond)) || len(a.Scenarios) != len(b.Scenarios) {
		return false
	}
	for i := range a.Scenarios {
		if a.Scenarios[i].ID() != b.Scenarios[i].ID() {
			return false
		}
	}
	return true
}
