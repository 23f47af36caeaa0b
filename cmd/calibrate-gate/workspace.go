// This file holds a kind's workspace: its folder, its files and environment, and the runs and
// comparisons of inferbench in it.

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/result"
)

// workspace runs inferbench for one kind in its own folder (its own store and results).
type workspace struct {
	k      kind
	flags  []string // run flags of every run
	dir    string
	bin    string
	env    []string
	stderr io.Writer
}

// run runs the scenario once with the extra environment, stored in the history or not, and
// returns the run folder.
func (w *workspace) run(extra map[string]string, store bool) (string, error) {
	args := append([]string{"run", "--format", "none", "--output-dir", "results"}, w.flags...)
	if !store {
		args = append(args, "--no-store")
	}
	cmd := exec.Command(w.bin, args...)
	cmd.Dir = w.dir
	cmd.Env = withEnv(w.env, extra)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("inferbench %s: %v\n%s", strings.Join(args, " "), err, tail(out, 2000))
	}
	latest := filepath.Join(w.dir, "results", "latest")
	target, err := os.Readlink(latest)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(latest), target)
	}
	return target, nil
}

// comparison is what compare said: its exit code, the metrics that failed, and the primary
// metric's row.
type comparison struct {
	exit           int
	failed         []failure
	primaryOld     float64
	primaryNew     float64
	threshold      float64
	thresholdRuns  int
	budgetExceeded int
	// cpuThreshold is cpu_ms's threshold where it gated (a CPU-bound scenario), else 0.
	cpuThreshold float64
}

// cpuMetric is the per-iteration CPU time a CPU-bound scenario is also judged by.
const cpuMetric = "cpu_ms"

func (w *workspace) compare(old, new string) (comparison, error) {
	cmd := exec.Command(w.bin, "compare", old, new, "--format", "json", "--results-dir", "results")
	cmd.Dir = w.dir
	cmd.Env = w.env
	var out, errOut bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	err := cmd.Run()
	var c comparison
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		c.exit = ee.ExitCode()
	default:
		return c, err
	}
	if c.exit != exitOK && c.exit != exitRegression {
		return c, fmt.Errorf("compare %s %s: exit %d: %s", old, new, c.exit, tail(errOut.Bytes(), 1000))
	}
	// compare's JSON is its Report, encoded (NaN as null: a delta of an old value of 0 reads 0).
	var rep compare.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return c, fmt.Errorf("compare %s %s: %v", old, new, err)
	}
	for _, r := range rep.Rows {
		if r.Verdict == compare.Regression {
			c.failed = append(c.failed, failure{metric: r.Metric, threshold: r.Threshold, delta: r.Delta})
		}
		if r.Metric == w.k.primary {
			c.primaryOld, c.primaryNew = r.Old, r.New
			c.threshold, c.thresholdRuns = r.Threshold, r.ThresholdRuns
		}
		if r.Metric == cpuMetric && r.Gated {
			c.cpuThreshold = r.Threshold
		}
	}
	if rep.BudgetsExceeded > 0 {
		c.failed = append(c.failed, failure{metric: "budget"})
	}
	return c, nil
}

// runInfo reads what a run measured: the primary metric's median, the measured iterations and
// the scenario's status.
func runInfo(dir, primary string) (median float64, iterations int, status string, err error) {
	r, err := result.Load(dir)
	if err != nil {
		return 0, 0, "", err
	}
	if len(r.Scenarios) != 1 {
		return 0, 0, "", fmt.Errorf("%s: %d scenarios, want 1", dir, len(r.Scenarios))
	}
	s := r.Scenarios[0]
	if m, ok := s.Metrics[primary]; ok && m.Summary != nil {
		median = m.Summary.Median
	}
	return median, s.Iterations.Measured, s.Status, nil
}

// writeFiles writes files (name: content, names relative to dir) into dir, making their folders.
func writeFiles(dir string, files map[string]string) error {
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// kindEnv is the environment of a kind's runs: this one cleaned (cleanEnv), with the program's
// mode (modeEnv), its binary, the CPU-bound command's interpreter (-python, else python3) and
// extra, and the worker's interpreter where -python names one.
func kindEnv(o options, bin, mode string, extra map[string]string) []string {
	py := o.python
	if py == "" {
		py = "python3"
	}
	env := withEnv(cleanEnv(os.Environ()), withEnvMap(map[string]string{modeEnv: mode, binEnv: bin, pythonEnv: py}, extra))
	if o.python != "" {
		env = withEnv(env, map[string]string{"INFERBENCH_PYTHON": o.python})
	}
	return env
}
