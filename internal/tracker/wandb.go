package tracker

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/internal/base/tail"
)

// wandbScript is the Python side of the W&B export: the payload on stdin, a JSON line per run
// made on stdout.
//
//go:embed wandb_export.py
var wandbScript string

// Note: W&B's wire protocol is not public (its client talks to a service process of its own),
// so the export runs the user's wandb package rather than speaking HTTP as ExportMLflow does.

// WandbOptions say where ExportWandb sends a run.
type WandbOptions struct {
	Project string // "" for $WANDB_PROJECT, else "inferbench"
	Entity  string // "" for $WANDB_ENTITY, else the user's default entity
	// Env is the environment of the Python process, KEY=VALUE as os.Environ: the interpreter
	// is chosen from it as the workers' is (pyenv.FindIn: INFERBENCH_PYTHON, the active venv,
	// python3), and wandb reads WANDB_MODE, WANDB_DIR, WANDB_API_KEY and the rest from it.
	Env []string
	Dir string // the process's working directory ("" for ours): wandb's ./wandb folder
	// Stderr receives wandb's own messages (nil: discarded).
	Stderr io.Writer
	// Timeout bounds the whole export (default 10 minutes: each run uploads on finish).
	Timeout time.Duration
}

// ExportWandb sends the payload to Weights & Biases: a run per scenario, grouped by the
// inferbench run id (config: params and the run's tags; summary: metrics; the time slices as
// steps; the run folder's files saved with each run).
func ExportWandb(ctx context.Context, p *Payload, o WandbOptions) (*Exported, error) {
	py := pyenv.FindIn(o.Env)
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	in, err := json.Marshal(struct {
		*Payload
		Project string `json:"project,omitempty"`
		Entity  string `json:"entity,omitempty"`
	}{p, o.Project, o.Entity})
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, py.Path, "-c", wandbScript)
	cmd.Env, cmd.Dir, cmd.Stdin = o.Env, o.Dir, bytes.NewReader(in)
	cmd.WaitDelay = 5 * time.Second
	var stdout bytes.Buffer
	errTail := &tail.Buffer{Max: 2048, W: o.Stderr}
	cmd.Stdout, cmd.Stderr = &stdout, errTail
	runErr := cmd.Run()
	project := o.Project
	if project == "" {
		project, _ = pyenv.Lookup(o.Env, "WANDB_PROJECT")
	}
	if project == "" {
		project = "inferbench"
	}
	out := &Exported{Tracker: "wandb", Where: fmt.Sprintf("project %q, group %s", project, p.RunID), Warnings: p.Warnings}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var r struct{ Scenario, ID, Dir, URL string }
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Scenario != "" {
			out.Runs = append(out.Runs, Created{Name: r.Scenario, ID: r.ID, URL: r.URL, Dir: r.Dir})
		}
	}
	var ee *exec.ExitError
	switch {
	case runErr == nil:
		return out, nil
	case errors.As(runErr, &ee) && ee.ExitCode() == 3:
		return out, fmt.Errorf("wandb: the wandb module is not importable by %s (chosen by %s): pip install wandb into %s (or set INFERBENCH_PYTHON to an interpreter that has it)",
			py.Path, py.Source, py.Path)
	case ctx.Err() != nil:
		return out, fmt.Errorf("wandb: %s: stopped after %v (%s lengthens it): %w", py.Path, timeout, TimeoutEnv, ctx.Err())
	}
	return out, fmt.Errorf("wandb: %s: %w: %s", py.Path, runErr, strings.TrimSpace(errTail.String()))
}
