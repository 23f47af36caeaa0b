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

	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/internal/base/readall"
	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/internal/serveimport"
	"github.com/inferbench/inferbench/internal/stage/recovery"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/store"
)

// ImportOptions say which results of other tools Import records, and how (`inferbench import`).
type ImportOptions struct {
	Files     []string // go test -bench output, pytest-benchmark JSON, hyperfine JSON, a serving tool's results
	Format    string   // auto, gobench, pytest, hyperfine, inferbench, vllm, aiperf, guidellm or llm-d
	ID        string   // the run id ("" for the time and the file name; _N is added to several)
	Benchmark string   // hyperfine: the benchmark name ("" for the file name)
	// Agent makes each file's run one of the agents that loaded one server (a serving tool's
	// results from several client machines): `inferbench merge --group` combines them exactly.
	// An Index of -1 gives each file its position among Files.
	Agent *result.AgentInfo
	Time  string // when the results were taken, RFC 3339 ("" for now)
	Store string // the history store's location, as run.Options.Store
	// SecretParams are parameter names whose values are secrets (--secret-param): masked whole.
	// Other parameters are kept as the file has them, but for a value that holds a secret of
	// the environment (HF_TOKEN's value) or a secret's shape, masked whole (redact.Params).
	SecretParams []string
	Env          run.Env
	// Stdout receives each run's id, a line each; Stderr a line on each file imported.
	Stdout, Stderr io.Writer
}

// redactParams masks, whole, the parameters of an imported run that are secrets (redact.Params):
// those o.SecretParams names, and those holding a value of the environment's secret variables;
// and those secrets in the names of its scenarios (a pytest test is named by its parameters).
func redactParams(r *result.Run, o ImportOptions) {
	red := redact.New()
	vars := o.Env.Vars
	if vars == nil {
		vars = os.Environ()
	}
	red.Env(vars)
	red.DeclareParams(o.SecretParams...)
	for i := range r.Scenarios {
		for k, v := range r.Scenarios[i].Params {
			red.Learn(k, v) // a declared secret's value: masked in the names that hold it
		}
	}
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		redact.Params(red, sc.Params)
		sc.Benchmark, sc.Scenario, sc.Source = red.String(sc.Benchmark), red.String(sc.Scenario), red.String(sc.Source)
	}
}

// Import records each file as a run in the history store (result.ImportFile reads it) and returns
// the ids of the runs (`inferbench import`). A file that cannot be read as the format is
// run.ErrUsage. An inferbench run.json of streamMin bytes or more goes to the store a batch of
// scenarios at a time (importStream), never whole in memory.
func Import(ctx context.Context, o ImportOptions) ([]string, error) {
	st, err := run.OpenStore(ctx, o.Store, o.Env)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	started := time.Now()
	if o.Time != "" {
		if started, err = time.Parse(time.RFC3339, o.Time); err != nil {
			return nil, exit.UsageError(fmt.Errorf("--time %q: want RFC 3339, e.g. 2026-03-01T12:00:00Z", o.Time))
		}
	}
	var runs []string
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
		asked := o.ID != ""
		agent := o.Agent
		if agent != nil && agent.Index < 0 {
			a := *agent
			a.Index = i
			agent = &a
		}
		if r, ok, err := importServing(path, file, o.Format, runID, started, agent); ok || err != nil {
			if err != nil {
				return runs, err
			}
			given := r.ID
			if err := putImported(ctx, st, r, asked && r.ID == runID); err != nil {
				return runs, err
			}
			runs = append(runs, r.ID)
			importedLine(o, file, r, len(r.Scenarios), given)
			continue
		}
		if agent != nil {
			return runs, exit.UsageError(fmt.Errorf("%s: --agents applies to a serving tool's results (vllm, aiperf, guidellm, llm-d), which this file is not", file))
		}
		head, n, given, done, err := importStream(ctx, st, path, file, o.Format, func(id string) bool { return asked && id == runID })
		if done {
			if err != nil {
				return runs, err
			}
			runs = append(runs, head.ID)
			importedLine(o, file, head, n, given)
			continue
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
			return runs, exit.UsageError(err)
		}
		redactParams(r, o)
		given = r.ID
		if asked && r.ID == runID {
			err = st.Put(ctx, r) // an id asked for: taken is an error
		} else {
			err = recovery.PutNew(ctx, st, r) // taken: a new id, never a replaced run
		}
		if err != nil {
			return runs, err
		}
		runs = append(runs, r.ID)
		importedLine(o, file, r, len(r.Scenarios), given)
	}
	return runs, nil
}

// importServing reads the file at path as a serving tool's results (serveimport.Read) when the
// format is theirs or auto; ok is false, with no error, for another format's file. A file of a
// serving tool that cannot be read is run.ErrUsage, naming the file, the tool and where.
func importServing(path, name, format, id string, at time.Time, agent *result.AgentInfo) (*result.Run, bool, error) {
	tool := ""
	switch format {
	case "auto":
	case serveimport.VLLM, serveimport.AIPerf, serveimport.GuideLLM, serveimport.LLMD:
		tool = format
	default:
		return nil, false, nil
	}
	r, ok, err := serveimport.Read(path, name, serveimport.Options{Tool: tool, ID: id, Time: at, Agent: agent})
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return nil, true, err
	case err != nil:
		return nil, true, exit.UsageError(err)
	case !ok && tool != "":
		return nil, true, exit.UsageError(serveimport.Unknown(name))
	}
	return r, ok, nil
}

// putImported stores r: an id asked for (exact) taken is an error, else a taken id gets a new
// one, never a replaced run.
func putImported(ctx context.Context, st store.Store, r *result.Run, exact bool) error {
	if exact {
		return st.Put(ctx, r)
	}
	return recovery.PutNew(ctx, st, r)
}

// importedLine says what Import recorded: the run's id on stdout, and on stderr the file, the
// run and its n scenarios, and why the id is not the one given.
func importedLine(o ImportOptions, file string, r *result.Run, n int, given string) {
	fmt.Fprintln(o.Stdout, r.ID)
	note := ""
	if r.ID != given {
		note = fmt.Sprintf(" (id %s was taken in the store)", given)
	}
	if r.Partial {
		note += " (partial: the run did not finish)"
	}
	fmt.Fprintf(o.Stderr, "imported %s: run %s, %d scenarios%s\n", file, r.ID, n, note)
}

// streamMin is the size from which an inferbench run.json is imported a batch of scenarios at a
// time, the size from which result.Load streams one (a variable for tests).
var streamMin int64 = 16 << 20

// importStream records the inferbench run.json at path (name in messages) as result.Scanner
// reads it, a batch of scenarios at a time, into a store that takes batches (store.Streamer):
// the import holds one batch, not the run (and a killed run's journal). done is false, and
// nothing is stored, when the file is not one to read so: under streamMin bytes, another format,
// a form the Scanner leaves to the whole reading (found before or while storing). exact says whether an id taken in the store is an
// error (an id asked for) rather than a reason to give the run a new one. given is the file's
// run id, n the scenarios stored.
func importStream(ctx context.Context, st store.Store, path, name, format string, exact func(id string) bool) (head *result.Run, n int, given string, done bool, err error) {
	streamer, ok := st.(store.Streamer)
	if !ok || (format != "inferbench" && format != "auto") {
		return nil, 0, "", false, nil
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() < streamMin {
		return nil, 0, "", false, nil
	}
	sc, ok, err := result.OpenScanner(path, name, format == "auto")
	if !ok || err != nil {
		return nil, 0, "", false, nil // the whole reading says what is wrong
	}
	defer sc.Close()
	head = sc.Head()
	if filepath.Base(path) == result.RunFile {
		// A killed run's scenarios since its last rewrite of run.json are in its journal.
		if err := sc.AddJournal(filepath.Dir(path)); err != nil {
			return nil, 0, "", false, nil
		}
	}
	given = head.ID
	counted := &counting{Batches: sc}
	for try := 0; ; try++ {
		err = streamer.PutStream(ctx, head, counted)
		if !errors.Is(err, store.ErrExists) || exact(given) {
			break
		}
		if try == 4 {
			return head, 0, given, true, fmt.Errorf("run %s: no free run id after 5 tries: %w", head.ID, store.ErrExists)
		}
		head.ID = result.NewID(head.StartedAt) // taken: a new id, never a replaced run
	}
	if errors.Is(err, result.ErrNotStreamable) {
		return nil, 0, "", false, nil
	}
	return head, counted.n, given, true, err
}

// counting counts the scenarios of the batches read.
type counting struct {
	store.Batches
	n int
}

func (c *counting) Scan() bool {
	if !c.Batches.Scan() {
		return false
	}
	c.n += len(c.Batches.Batch())
	return true
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
		err = enc.Encode(gitHubActionBenchmark(r, dir))
	default:
		return exit.UsageError(fmt.Errorf("--format %q: want gobench or github-action-benchmark", o.Format))
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}
