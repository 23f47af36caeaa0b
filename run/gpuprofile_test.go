package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// fakeTool writes an executable shell script named name into dir.
func fakeTool(t *testing.T, dir, name, body string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, name), "#!/bin/sh\n"+body)
	if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestNsightScripts: --profile on a GPU machine with nsys and ncu wrote nothing for them. Now a
// profiled scenario gets profiles/SCENARIO/nsys.sh and ncu.sh, listed in run.json, that run it
// again under the tool; here the tools and nvidia-smi are fakes on PATH, and running nsys.sh
// shows the command line the tool gets.
func TestNsightScripts(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the scripts are POSIX shell scripts")
	}
	bin := t.TempDir()
	argsFile := filepath.Join(t.TempDir(), "nsys-args")
	fakeTool(t, bin, "nvidia-smi", `case "$1" in
--query-gpu=*) echo "0, NVIDIA Fake GPU, 81559, 550.54, 700, Disabled, Enabled, 9.0, GPU-0000";;
*) echo "| NVIDIA-SMI 550.54   Driver Version: 550.54   CUDA Version: 12.4 |";;
esac
`)
	fakeTool(t, bin, "nsys", `for a in "$@"; do echo "$a"; done > "$NSYS_ARGS"
`)
	fakeTool(t, bin, "ncu", "exit 0\n")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("NSYS_ARGS", argsFile)

	dir := t.TempDir()
	def := filepath.Join(dir, "benches", "cmd.yaml")
	writeFile(t, def, `name: cmd
subject: {kind: exec, command: ["true"]}
matrix: {n: [1]}
load: {warmup_iterations: 2, measurement_iterations: 3}
`)
	r, runDir, _ := func() (*result.Run, string, string) {
		t.Helper()
		opts := Options{Selection: Selection{Paths: []string{dir}}, OutputDir: filepath.Join(t.TempDir(), "out"),
			NoStore: true, Format: "none", Monitor: Monitor{Off: true}, Dir: dir, Profile: 5}
		r, err := Run(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		return r, filepath.Join(opts.OutputDir, r.ID), ""
	}()
	s := r.Scenarios[0]
	want := []string{"profiles/cmd__n=1/nsys.sh", "profiles/cmd__n=1/ncu.sh"}
	if strings.Join(s.Profiles, " ") != strings.Join(want, " ") {
		t.Fatalf("profiles %q, want %q (warnings %q)", s.Profiles, want, s.Warnings)
	}
	ws := strings.Join(s.Warnings, "\n")
	if strings.Contains(ws, "has no profiler") || !strings.Contains(ws, "expected: profiles/cmd__n=1/nsys.sh, profiles/cmd__n=1/ncu.sh run the scenario again under NVIDIA's profilers") {
		t.Errorf("warnings %q", s.Warnings)
	}
	html, _ := os.ReadFile(filepath.Join(runDir, "report.html"))
	if !strings.Contains(string(html), `href="profiles/cmd__n=1/nsys.sh"`) {
		t.Errorf("report.html does not link nsys.sh")
	}

	script := filepath.Join(runDir, s.Profiles[0])
	if b, _ := os.ReadFile(script); testing.Verbose() {
		t.Logf("%s:\n%s", script, b)
	}
	if out, err := exec.Command("sh", script).CombinedOutput(); err != nil {
		t.Fatalf("sh %s: %v\n%s", script, err, out)
	}
	got, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	wantArgs := []string{"profile", "--trace=cuda,nvtx,osrt", "--force-overwrite=true", "--output=" + filepath.Dir(script) + "/nsys",
		exe, "run", def, "--include", "cmd/n=1", "--warmup", "2", "--iterations", "5",
		"--no-monitor", "--no-store", "--no-html-report", "--no-request-log", "--output-dir", filepath.Dir(script) + "/run"}
	if strings.TrimSpace(string(got)) != strings.Join(wantArgs, "\n") {
		t.Errorf("nsys got:\n%s\nwant:\n%s", got, strings.Join(wantArgs, "\n"))
	}

	// No GPU: no scripts, whatever is on PATH.
	if g := newGPUProfiler(&pipeline{o: Options{Profile: 5}, env: Env{Vars: os.Environ()}}, 0); g != nil {
		t.Errorf("a machine without a GPU got Nsight scripts")
	}
}
