package merge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/internal/stage/recovery"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/store"
)

// GroupOptions say which runs of a scale-out group Group makes one run of.
type GroupOptions struct {
	// Paths are run folders or run.json files; when empty, the runs of Group recorded in the
	// store (Options.Store) in the last Since are read.
	Paths []string
	// Group is the group merged; with Paths, each run must be of it ("" checks nothing).
	Group string
	Since time.Duration
	// AllowMissing passes the gate even when parts are missing or did not finish.
	AllowMissing bool
	// KeepSamples bounds the raw samples kept per metric when agents are combined (default
	// 10,000; negative keeps all).
	KeepSamples int
}

// Group makes one run of the shards or agents of a group (Runs), writes it like any run
// (run.json in a new folder under o.OutputDir), and records, judges and renders it as run.Run
// does (run.Judge): `inferbench merge`. It returns the merged run and its folder. The error is
// run.Run's, and also run.ErrUsage for runs that cannot be read or merged, and an error (exit
// code 1, or 3 on a regression too) when the group is incomplete without AllowMissing.
func Group(ctx context.Context, o run.Options, mo GroupOptions) (*result.Run, string, error) {
	if o.Format != "text" && o.Format != "json" && o.Format != "none" {
		return nil, "", exit.UsageError(fmt.Errorf("--format %q: want text, json or none", o.Format))
	}
	if o.NoStore && o.Baseline != "" {
		return nil, "", exit.UsageError(errors.New("--baseline needs the history store: drop --no-store"))
	}
	env := run.Env{Dir: o.Dir, Vars: o.Env}
	runs, err := mergeInputs(ctx, o.Store, env, mo.Paths, mo.Group, mo.Since)
	if err != nil {
		return nil, "", err
	}
	m, err := Runs(runs, Options{AllowMissing: mo.AllowMissing, KeepSamples: mo.KeepSamples})
	if err != nil {
		return nil, "", exit.UsageError(fmt.Errorf("%v", err))
	}
	red := redact.New(o.Secrets...)
	if len(o.Args) > 0 {
		m.Config.Args = red.Args(o.Args) // the merge's own command line; each part's is in merged.parts
	}
	for i := range m.Merged.Parts {
		m.Merged.Parts[i].Args = red.Args(m.Merged.Parts[i].Args)
	}
	m.Config.Dir = o.Dir
	if o.Format == "text" && o.Stdout != nil {
		fmt.Fprintf(o.Stdout, "merged %d of %d %s of group %s\n", len(m.Merged.Parts), m.Merged.Count, m.Merged.Kind, m.Merged.Group)
		for _, miss := range m.Merged.Missing {
			fmt.Fprintf(o.Stdout, "missing: %s\n", miss)
		}
	}
	// Written, recorded, judged (baseline, budgets) and rendered by run, as its own runs are.
	dir, jerr := run.Made(context.WithoutCancel(ctx), o, m)
	if dir == "" {
		return m, "", jerr
	}
	if failed, why := Failed(m); failed {
		code := exit.Failure
		if errors.Is(jerr, run.ErrRegression) {
			code = exit.Regression
		}
		return m, dir, &codedError{code: code, err: errors.Join(fmt.Errorf("group %s is incomplete: %s (results in %s; --allow-missing accepts it)", m.Merged.Group, why, dir), jerr)}
	}
	return m, dir, jerr
}

// mergeInputs reads the runs to merge: the folders given, or the group's runs in the store.
func mergeInputs(ctx context.Context, storeLoc string, env run.Env, args []string, group string, since time.Duration) ([]*result.Run, error) {
	var runs []*result.Run
	if len(args) > 0 {
		paths := make([]string, len(args))
		for i, a := range args {
			paths[i] = env.Path(a)
		}
		var err error
		if runs, err = Load(paths); err != nil {
			if os.IsNotExist(err) {
				return nil, exit.UsageError(fmt.Errorf("merge: %v (want run folders or run.json files)", err))
			}
			return nil, exit.UsageError(fmt.Errorf("merge: %v", err))
		}
	}
	if len(args) > 0 {
		if group != "" {
			for _, r := range runs {
				if g := partGroup(r); g != group {
					return nil, exit.UsageError(fmt.Errorf("merge: %s is of group %q, not %q", r.ID, g, group))
				}
			}
		}
		return runs, nil
	}
	st, err := run.OpenStore(ctx, storeLoc, env)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	infos, err := st.List(ctx, store.Filter{Since: time.Now().Add(-since)})
	if err != nil {
		return nil, err
	}
	// Note: the store has no index by group (a run's group is in its document), so the runs of
	// the window are read one by one; --since bounds the scan.
	for _, info := range infos {
		r, err := st.Get(ctx, info.ID)
		if err != nil {
			return nil, err
		}
		if partGroup(r) == group {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("merge: no run of group %q in the store %s since %s", group, recovery.StoreLabel(storeLoc, env.Lookup, env.Dir), time.Now().Add(-since).Format(time.RFC3339))
	}
	return runs, nil
}

func partGroup(r *result.Run) string {
	switch {
	case r.Shard != nil:
		return r.Shard.Group
	case r.Agent != nil:
		return r.Agent.Group
	}
	return ""
}

// codedError is an error whose exit code (run.ExitCode) is chosen where it is made, when the
// sentinels it wraps would say otherwise: an incomplete group that also regressed exits 3.
type codedError struct {
	code int
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }
func (e *codedError) ExitCode() int { return e.code }
