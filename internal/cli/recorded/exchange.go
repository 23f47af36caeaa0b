package recorded

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/internal/base/readall"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
)

// ImportOptions say which results of other tools Import records, and how (`inferbench import`).
type ImportOptions struct {
	Files     []string // go test -bench output, pytest-benchmark JSON or hyperfine JSON
	Format    string   // auto, gobench, pytest or hyperfine
	ID        string   // the run id ("" for the time and the file name; _N is added to several)
	Benchmark string   // hyperfine: the benchmark name ("" for the file name)
	Time      string   // when the results were taken, RFC 3339 ("" for now)
	Store     string   // the history store's location, as run.Options.Store
	Env       run.Env
	// Stdout receives each run's id, a line each; Stderr a line on each file imported.
	Stdout, Stderr io.Writer
}

// Import records each file as a run in the history store (result.Import reads it) and returns
// the runs (`inferbench import`). A file that cannot be read as the format is run.ErrUsage.
func Import(ctx context.Context, o ImportOptions) ([]*result.Run, error) {
	st, err := run.OpenStore(ctx, o.Store, o.Env)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	started := time.Now()
	if o.Time != "" {
		if started, err = time.Parse(time.RFC3339, o.Time); err != nil {
			return nil, run.UsageError(fmt.Errorf("--time %q: want RFC 3339, e.g. 2026-03-01T12:00:00Z", o.Time))
		}
	}
	var runs []*result.Run
	for i, file := range o.Files {
		path := o.Env.Path(file)
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			// A run folder: its run.json (and the journal of a run that never finished).
			file, path = filepath.Join(file, result.RunFile), filepath.Join(path, result.RunFile)
		}
		base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		// A generated id is unique (result.NewID): two files of the same name imported in
		// the same second are two runs.
		runID := result.NewID(started) + "_" + base
		if o.ID != "" {
			runID = o.ID
			if len(o.Files) > 1 {
				runID = fmt.Sprintf("%s_%d", o.ID, i+1)
			}
		}
		b := o.Benchmark
		if b == "" {
			b = base
		}
		r, err := result.ImportFile(path, file, o.Format, runID, b, started)
		var pe *fs.PathError
		if errors.As(err, &pe) || errors.Is(err, readall.ErrNotRegular) || errors.Is(err, readall.ErrTooLarge) {
			return runs, err // the file could not be read: not a usage error
		}
		if err == nil && r.Schema != "" && filepath.Base(path) == result.RunFile {
			// A killed run's scenarios since its last rewrite of run.json are in its journal.
			err = result.AddJournal(filepath.Dir(path), r)
		}
		if err != nil {
			return runs, run.UsageError(err)
		}
		given := r.ID
		if o.ID != "" && r.ID == runID {
			err = st.Put(ctx, r) // an id asked for: taken is an error
		} else {
			err = run.PutNew(ctx, st, r) // taken: a new id, never a replaced run
		}
		if err != nil {
			return runs, err
		}
		runs = append(runs, r)
		fmt.Fprintln(o.Stdout, r.ID)
		note := ""
		if r.ID != given {
			note = fmt.Sprintf(" (id %s was taken in the store)", given)
		}
		if r.Partial {
			note += " (partial: the run did not finish)"
		}
		fmt.Fprintf(o.Stderr, "imported %s: run %s, %d scenarios%s\n", file, r.ID, len(r.Scenarios), note)
	}
	return runs, nil
}

// ExportOptions say how Export writes a run.
type ExportOptions struct {
	// Format is gobench (the Go benchmark format, one line per sample, for benchstat) or
	// github-action-benchmark (JSON of the lower-is-better metrics).
	Format string
	// BiggerIsBetter writes github-action-benchmark's higher-is-better metrics instead (its
	// customBiggerIsBetter tool).
	BiggerIsBetter bool
}

// Export writes the run ref names to w in another tool's format (`inferbench export`).
func (rs *Source) Export(ctx context.Context, ref string, o ExportOptions, w io.Writer) error {
	r, err := rs.Load(ctx, ref)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	switch o.Format {
	case "gobench":
		err = result.WriteGoBench(bw, r)
	case "github-action-benchmark":
		dir := result.Lower
		if o.BiggerIsBetter {
			dir = result.Higher
		}
		enc := finite.NewEncoder(bw)
		enc.SetIndent("", "  ")
		err = enc.Encode(result.GitHubActionBenchmark(r, dir))
	default:
		return run.UsageError(fmt.Errorf("--format %q: want gobench or github-action-benchmark", o.Format))
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}
