// Package nsight writes the scripts that profile a scenario on an NVIDIA GPU, for
// `inferbench run --profile`. NVIDIA's Nsight Systems (nsys, a timeline of kernels, copies and
// CPU threads) and Nsight Compute (ncu, per-kernel metrics) must start the process they profile,
// and take minutes. So the run does not run them: for each profiled scenario whose work can be on
// the GPU it writes profiles/SCENARIO/nsys.sh and ncu.sh, which run that scenario again under
// them, apart from the measured run. They are written when the tool is on PATH and the machine
// has an NVIDIA GPU (sysinfo's list: NVML or nvidia-smi; the caller checks).
package nsight

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kballard/go-shellquote"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/suite"
)

// kinds are the subject kinds whose work may run on this machine's GPU: a model in a
// worker process, a command, a Go function. An OpenAI-compatible server's GPU work is in the
// server (profile it there); the mock has none.
var kinds = map[string]bool{"worker": true, "exec": true, "gofunc": true}

// Scripts writes the nsys and ncu scripts of a run.
type Scripts struct {
	tools map[string]string // "nsys", "ncu" -> the executable found on PATH
	exe   string            // this inferbench binary
	dir   string            // the working directory the scripts run in
	flags []string          // the run's selection flags a re-run repeats (--set, --enable-mock, ...)
	red   *redact.Redactor
	n     int // --profile's calls: the profiled iterations of a re-run
}

// New returns the script writer of a run whose PATH is path, working directory dir, selection
// flags flags and profiled calls calls (--profile N), with its redactor; nil when neither tool is
// on path. The caller checks that the machine has an NVIDIA GPU.
func New(path, dir string, flags []string, calls int, red *redact.Redactor) *Scripts {
	tools := map[string]string{}
	for _, name := range []string{"nsys", "ncu"} {
		if f := lookPath(name, path); f != "" {
			tools[name] = f
		}
	}
	if len(tools) == 0 {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		exe = "inferbench"
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return &Scripts{tools: tools, exe: exe, dir: dir, flags: flags, red: red, n: calls}
}

// lookPath finds an executable file name in the directories of path (a PATH value).
func lookPath(name, path string) string {
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			continue
		}
		f := filepath.Join(d, name)
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return f
		}
	}
	return ""
}

var _ engine.ProfileCommands = (*Scripts)(nil).Write

// Write is an engine.ProfileCommands: the scripts of one scenario, into dir.
func (g *Scripts) Write(sc *suite.Scenario, cfg load.Config, dir string) ([]string, error) {
	b := sc.Benchmark
	if !kinds[b.Kind] || b.File == "" {
		return nil, nil // nothing on this machine's GPU, or no definition file to run it from
	}
	if dev := strings.ToLower(fmt.Sprint(sc.Params["device"])); dev == "cpu" || dev == "mps" {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	run := g.runArgs(sc, cfg)
	var files []string
	for _, t := range []struct{ name, what, args, open string }{
		{"nsys", "NVIDIA Nsight Systems timeline", `profile --trace=cuda,nvtx,osrt --force-overwrite=true --output="$here/nsys"`,
			"nsys.nsys-rep beside this script: open it in nsys-ui, or summarise it with `nsys stats nsys.nsys-rep`"},
		{"ncu", "NVIDIA Nsight Compute kernel profile", `--target-processes all --set full --launch-count 200 --force-overwrite --export "$here/ncu"`,
			"ncu.ncu-rep beside this script (the first 200 kernels; --launch-count sets how many): open it in ncu-ui, or `ncu --import ncu.ncu-rep`"},
	} {
		tool, ok := g.tools[t.name]
		if !ok {
			continue
		}
		script := fmt.Sprintf(`#!/bin/sh
# %s of %s, written by inferbench run --profile.
# It runs the scenario again, apart from the measured run (whose figures it does not touch):
# %d warm-up and %d profiled iterations under %s. Output: %s.
set -e
here=$(cd "$(dirname "$0")" && pwd)
cd %s
exec %s %s \
  %s --output-dir "$here/run"
`, t.what, sc.ID(), cfg.Warmup(), g.iterations(cfg), t.name, t.open,
			shellquote.Join(g.dir), shellquote.Join(tool), t.args, run)
		f := filepath.Join(dir, t.name+".sh")
		if err := os.WriteFile(f, []byte(g.red.String(script)), 0o755); err != nil {
			return files, err
		}
		files = append(files, f)
	}
	return files, nil
}

// iterations is the measured iterations of a profiled re-run: as many calls as the profiling
// pass makes (--profile N), so that the profile stays short.
func (g *Scripts) iterations(load.Config) int { return max(g.n, 1) }

// runArgs is the inferbench command line that runs the scenario alone.
func (g *Scripts) runArgs(sc *suite.Scenario, cfg load.Config) string {
	args := []string{g.exe, "run", sc.Benchmark.File, "--include", sc.ID(),
		"--warmup", strconv.Itoa(cfg.Warmup()), "--iterations", strconv.Itoa(g.iterations(cfg)),
		"--no-monitor", "--no-store", "--no-html-report", "--no-request-log"}
	return shellquote.Join(append(args, g.flags...)...)
}
