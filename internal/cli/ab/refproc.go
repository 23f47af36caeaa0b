package ab

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/inferbench/inferbench/internal/base/exit"
	"github.com/inferbench/inferbench/internal/base/gitref"
	"github.com/inferbench/inferbench/internal/base/tail"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/run"
	"github.com/inferbench/inferbench/suite"
)

// Note: a Go function lives in the binary that registered it, so the ref's can only run in a
// binary built at the ref. Each block of either side is one `run` of its binary (the ref's build,
// this executable for the working tree), which measures the calls in-process and prints its
// run.json: both sides pay the same start-up, outside the measured calls, and any version of
// inferbench at the ref understands the command. Keeping one process per side open across the
// blocks would need a protocol that the ref's version may not speak.

// procSides are the benchmark binaries of the two sides and where they run.
type procSides struct {
	bin, dir [2]string
	out      string // their output folders' parent
	args     []string
	env      []string
	ref      string
	// monitor are a block's monitor flags: --no-monitor unless the run samples its sides, when
	// each block's process samples itself over its measured calls (SampleWith).
	monitor []string
}

// buildSides builds the running binary's main package at the ref; the working tree's side is
// this executable.
func buildSides(ctx context.Context, wt *gitref.Worktree, tmp string, env, refEnv run.Env, sel run.Selection, ov load.Config) (*procSides, error) {
	at := fmt.Sprintf("%s (%s)", wt.Ref, wt.Short())
	module, pkg, err := gitref.MainPackage()
	if err == nil && strings.HasSuffix(pkg, ".test") {
		err = fmt.Errorf("a test binary (%s) cannot be rebuilt at a ref", pkg)
	}
	if err != nil {
		return nil, exit.UsageError(fmt.Errorf("--baseline-ref %s: Go functions are built at the ref from the main package of this binary: %w", at, err))
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p := &procSides{out: tmp, ref: wt.Ref, monitor: []string{"--no-monitor"}}
	p.bin = [2]string{filepath.Join(tmp, "bench-ref"), self}
	p.dir = [2]string{refEnv.WorkDir(), env.WorkDir()}
	if err := wt.Build(ctx, module, pkg, p.bin[0], env.Vars); err != nil {
		return nil, fmt.Errorf("--baseline-ref %s: %w", at, err)
	}
	// Every block is a bare run: no store, reports, thresholds or budgets, and nothing written
	// to the job summary or a trace; no monitors unless the run samples its sides.
	p.args = []string{"--no-store", "--no-html-report", "--no-request-log", "--format", "json",
		"--keep-samples", "0", "--thresholds-file", "", "--budget-file", ""}
	for _, s := range sel.Set {
		p.args = append(p.args, "--set", s)
	}
	if sel.EnableMock {
		p.args = append(p.args, "--enable-mock")
	}
	if ov.Timeout > 0 {
		p.args = append(p.args, "--timeout", ov.Timeout.String())
	}
	p.args = append(p.args, sel.Paths...)
	for _, kv := range env.Vars {
		if strings.HasPrefix(kv, "GITHUB_STEP_SUMMARY=") || strings.HasPrefix(kv, "OTEL_") || strings.HasPrefix(kv, "INFERBENCH_STORE=") {
			continue
		}
		p.env = append(p.env, kv)
	}
	return p, nil
}

// sampler runs a block of n calls of scenario s on side v as one run of that side's binary, with
// warm warm-up calls first, and returns the latency of each measured call; the resources the
// block's process sampled over them, when it did, go to resources.
func (p *procSides) sampler(s *suite.Scenario, warm int, others func(map[string][]float64), resources func(*result.Resources)) Sampler {
	return func(ctx context.Context, v, n int) ([]float64, int, error) {
		side := [2]string{"at " + p.ref, "in the working tree"}[v]
		out := filepath.Join(p.out, strconv.Itoa(v))
		args := append([]string{"run", "--include", globQuote(s.ID()), "--warmup-iterations", strconv.Itoa(warm),
			"--measurement-iterations", strconv.Itoa(n), "--output-dir", out}, p.monitor...)
		args = append(args, p.args...)
		cmd := exec.CommandContext(ctx, p.bin[v], args...)
		cmd.Dir, cmd.Env = p.dir[v], p.env
		var stdout bytes.Buffer
		stderr := &tail.Buffer{Max: 4096}
		cmd.Stdout, cmd.Stderr = &stdout, stderr
		runErr := cmd.Run()
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		r, err := result.Decode(stdout.Bytes(), p.bin[v])
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %s run %s: %v: %s", s.ID(), filepath.Base(p.bin[v]), side, runErr, strings.TrimSpace(stderr.String()))
		}
		for _, sc := range r.Scenarios {
			if sc.ID() != s.ID() {
				continue
			}
			m := sc.Metrics["latency_ms"]
			xs := m.Samples
			if len(xs) == 0 && m.Value != nil {
				xs = []float64{*m.Value}
			}
			if len(xs) == 0 {
				return nil, sc.Iterations.Failed, fmt.Errorf("%s %s: no latency_ms measured (%s): %s", s.ID(), side, sc.Status, sc.Error)
			}
			if cpu := sc.Metrics[cpuMetric]; others != nil && len(cpu.Samples) == len(xs) {
				others(map[string][]float64{cpuMetric: cpu.Samples})
			}
			if resources != nil {
				resources(sc.Extra.Resources)
			}
			return xs, sc.Iterations.Failed, nil
		}
		return nil, 0, fmt.Errorf("%s is not a scenario of the benchmark binary %s (is its function registered there?): %s", s.ID(), side, strings.TrimSpace(stderr.String()))
	}
}

// globQuote makes an --include pattern that matches name alone.
func globQuote(name string) string {
	return strings.NewReplacer("*", "[*]", "?", "[?]", "[", "[[]").Replace(name)
}
