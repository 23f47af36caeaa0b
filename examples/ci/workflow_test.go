// Package ci holds the GitHub Actions workflow of docs/ci.md and docs/scale-out.md; its test
// decodes the workflow strictly, checks the structure the sharded jobs depend on, and runs the
// shard and merge jobs' commands as the runners would, with the artifacts passed between them.
package ci

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/inferbench/inferbench/internal/cli"
	"github.com/inferbench/inferbench/result"
)

// TestMain lets the workflow's commands call this test binary as inferbench (INFERBENCH_TEST_MAIN=1).
func TestMain(m *testing.M) {
	if os.Getenv("INFERBENCH_TEST_MAIN") == "1" {
		os.Exit(cli.Main(context.Background(), os.Args[1:], cli.IO{Stdout: os.Stdout, Stderr: os.Stderr}))
	}
	os.Exit(m.Run())
}

// workflow is the part of GitHub's workflow syntax the example uses; decoding is strict, so a
// key the struct does not know (a misspelt `need:`, `fail_fast:`) is an error.
type workflow struct {
	Name        string            `yaml:"name"`
	On          map[string]any    `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Concurrency map[string]any    `yaml:"concurrency"`
	Env         map[string]string `yaml:"env"`
	Jobs        map[string]job    `yaml:"jobs"`
}

type job struct {
	If          string            `yaml:"if"`
	Permissions map[string]string `yaml:"permissions"`
	Needs       any               `yaml:"needs"` // a job name or a list of them
	RunsOn      any               `yaml:"runs-on"`
	Strategy    *struct {
		FailFast *bool            `yaml:"fail-fast"`
		Matrix   map[string][]any `yaml:"matrix"`
	} `yaml:"strategy"`
	Steps []step `yaml:"steps"`
}

type step struct {
	Name  string            `yaml:"name"`
	ID    string            `yaml:"id"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	With  map[string]any    `yaml:"with"`
	Env   map[string]string `yaml:"env"`
	Shell string            `yaml:"shell"`
	Run   string            `yaml:"run"`
}

func load(t *testing.T) workflow { return loadFile(t, "github-actions.yml") }

func loadFile(t *testing.T, name string) workflow {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.UnmarshalWithOptions(data, &w, yaml.Strict()); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return w
}

func (j job) needs() []string {
	switch n := j.Needs.(type) {
	case string:
		return []string{n}
	case []any:
		var s []string
		for _, v := range n {
			s = append(s, fmt.Sprint(v))
		}
		return s
	}
	return nil
}

// find returns the job's first step using action (e.g. "actions/upload-artifact").
func (j job) find(action string) *step {
	for i := range j.Steps {
		if strings.HasPrefix(j.Steps[i].Uses, action+"@") {
			return &j.Steps[i]
		}
	}
	return nil
}

func (s step) with(key string) string {
	if s.With == nil {
		return ""
	}
	return fmt.Sprint(s.With[key])
}

func TestStrictDecodingRejectsUnknownKeys(t *testing.T) {
	var w workflow
	bad := []byte("jobs:\n  a:\n    need: b\n")
	if err := yaml.UnmarshalWithOptions(bad, &w, yaml.Strict()); err == nil || !strings.Contains(err.Error(), "need") {
		t.Fatalf("a misspelt key decoded: %v", err)
	}
}

// TestInstallFromSource checks that every job calling inferbench installs it from a checkout of
// its source (the module is not on the public Go proxy: `go install ...@latest` cannot fetch it).
func TestInstallFromSource(t *testing.T) {
	w := load(t)
	for name, j := range w.Jobs {
		uses, checkout, install := false, -1, -1
		for i, s := range j.Steps {
			if regexp.MustCompile(`go install \S+@latest`).MatchString(s.Run) {
				t.Errorf("job %s step %q: %q cannot fetch inferbench (not on the public proxy)", name, s.Name, s.Run)
			}
			if strings.HasPrefix(s.Uses, "actions/checkout@") && s.with("path") == ".inferbench-src" {
				checkout = i
				if s.with("repository") != "${{ vars.INFERBENCH_REPO }}" || s.with("ref") != "${{ vars.INFERBENCH_REF }}" {
					t.Errorf("job %s: the inferbench checkout is of %s@%s", name, s.with("repository"), s.with("ref"))
				}
			}
			if strings.Contains(s.Run, "make -C .inferbench-src install") && strings.Contains(s.Run, `"$(go env GOPATH)/bin" >> "$GITHUB_PATH"`) {
				install = i
			}
			if regexp.MustCompile(`(?m)^\s*(eval )?inferbench `).MatchString(s.Run) || strings.Contains(s.Run, "eval inferbench") {
				uses = true
				if install < 0 {
					t.Errorf("job %s step %q calls inferbench before installing it", name, s.Name)
				}
			}
		}
		if uses && !(checkout >= 0 && install > checkout) {
			t.Errorf("job %s: checkout of .inferbench-src at step %d, make install at step %d", name, checkout, install)
		}
	}
}

// TestShardedJobs checks the structure the sharded pull-request gate depends on.
func TestShardedJobs(t *testing.T) {
	w := load(t)
	sh, ok := w.Jobs["bench-shard"]
	if !ok {
		t.Fatal("no job bench-shard")
	}
	mg, ok := w.Jobs["bench-merge"]
	if !ok {
		t.Fatal("no job bench-merge")
	}
	if sh.Strategy == nil || sh.Strategy.FailFast == nil || *sh.Strategy.FailFast {
		t.Error("bench-shard: want fail-fast: false (a failed shard must not cancel the others)")
	}
	shards := sh.Strategy.Matrix["shard"]
	if len(sh.Strategy.Matrix) != 1 || len(shards) < 2 {
		t.Fatalf("bench-shard matrix: %v (want one axis, shard, of at least 2)", sh.Strategy.Matrix)
	}
	for i, v := range shards {
		if fmt.Sprint(v) != fmt.Sprint(i) {
			t.Errorf("matrix.shard[%d] = %v: want 0..%d in order", i, v, len(shards)-1)
		}
	}
	var runStep *step
	for i := range sh.Steps {
		if strings.Contains(sh.Steps[i].Run, "inferbench run") {
			runStep = &sh.Steps[i]
		}
	}
	if runStep == nil || !strings.Contains(runStep.Run, "--shard ${{ strategy.job-index }}/${{ strategy.job-total }}") {
		t.Fatalf("bench-shard: no `inferbench run --shard ${{ strategy.job-index }}/${{ strategy.job-total }}` step")
	}
	up := sh.find("actions/upload-artifact")
	if up == nil || up.If != "always()" {
		t.Fatalf("bench-shard: the shard is not uploaded with if: always(): %+v", up)
	}
	if !regexp.MustCompile(`--output-dir (\S+)`).MatchString(runStep.Run) ||
		strings.TrimSuffix(up.with("path"), "/") != regexp.MustCompile(`--output-dir (\S+)`).FindStringSubmatch(runStep.Run)[1] {
		t.Errorf("bench-shard uploads %q, the run writes to %q", up.with("path"), runStep.Run)
	}

	if !slices.Contains(mg.needs(), "bench-shard") {
		t.Errorf("bench-merge needs %v, not bench-shard", mg.needs())
	}
	if !strings.Contains(mg.If, "always()") {
		t.Errorf("bench-merge if: %q: without always() a failed shard skips the merge and the gate", mg.If)
	}
	if !strings.Contains(mg.If, "pull_request") || !strings.Contains(sh.If, "pull_request") {
		t.Errorf("bench-shard if %q and bench-merge if %q should both run on pull requests", sh.If, mg.If)
	}
	down := mg.find("actions/download-artifact")
	if down == nil {
		t.Fatal("bench-merge downloads no artifact")
	}
	pattern := down.with("pattern")
	for _, v := range shards {
		name := strings.ReplaceAll(up.with("name"), "${{ matrix.shard }}", fmt.Sprint(v))
		if ok, _ := path.Match(pattern, name); !ok || strings.Contains(name, "${{") {
			t.Errorf("shard %v uploads artifact %q, which the download pattern %q misses", v, name, pattern)
		}
	}
	if down.with("merge-multiple") == "true" {
		t.Error("bench-merge: merge-multiple puts every shard's latest into one folder")
	}
	var merge string
	for _, s := range mg.Steps {
		if strings.Contains(s.Run, "inferbench merge") {
			merge = s.Run
		}
	}
	want := "inferbench merge " + down.with("path") + "/" + pattern + "/latest --baseline main"
	if merge != want {
		t.Errorf("bench-merge runs %q, want %q", merge, want)
	}
}

// TestShardedJobsRun runs the commands of bench-shard (once per matrix entry) and bench-merge as
// the runners would: each in its own folder, the artifacts copied between them as
// upload-artifact (which follows the latest link) and download-artifact (one folder per
// artifact) do, with a baseline main recorded beforehand. The merged run must hold the whole
// suite, once, under the group inferbench derives from GITHUB_RUN_ID.
func TestShardedJobsRun(t *testing.T) {
	w := load(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the workflow's commands:", err)
	}
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	os.MkdirAll(bin, 0o755)
	self, _ := filepath.Abs(os.Args[0])
	// inferbench on the PATH: this test binary, with mock subjects allowed for run.
	shim := "#!/usr/bin/env bash\nif [ \"$1\" = run ]; then shift; set -- run --enable-mock \"$@\"; fi\nINFERBENCH_TEST_MAIN=1 exec " + self + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "inferbench"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	def := "name: grid\nsubject: {kind: mock, latency_ms: 0.1}\nmatrix:\n  batch_size: [1, 2, 3, 4, 5, 6]\n  variant: [eager, compiled]\nload: {mode: single, warmup_iterations: 0, measurement_iterations: 10}\n"
	env := append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "INFERBENCH_STORE=", "CI=1", "GITHUB_RUN_ID=4242", "GITHUB_RUN_ATTEMPT=2")
	project := func(name string) string {
		dir := filepath.Join(root, name)
		os.MkdirAll(filepath.Join(dir, "benches", "unit"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, "benches", "unit", "grid.yaml"), []byte(def), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	sh := func(dir, script string, vars map[string]string) (string, error) {
		for k, v := range vars {
			script = strings.ReplaceAll(script, "${{ "+k+" }}", v)
		}
		if strings.Contains(script, "${{") {
			t.Fatalf("unknown expression in %q", script)
		}
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// commands runs a job's run: steps, except the install (the shim stands in for it).
	artifacts := filepath.Join(root, "artifacts")
	commands := func(j job, dir string, vars map[string]string) {
		for _, s := range j.Steps {
			switch {
			case strings.HasPrefix(s.Uses, "actions/upload-artifact@"):
				name := s.with("name")
				for k, v := range vars {
					name = strings.ReplaceAll(name, "${{ "+k+" }}", v)
				}
				copyTree(t, filepath.Join(dir, s.with("path")), filepath.Join(artifacts, name))
			case strings.HasPrefix(s.Uses, "actions/download-artifact@"):
				names, _ := filepath.Glob(filepath.Join(artifacts, s.with("pattern")))
				for _, a := range names {
					copyTree(t, a, filepath.Join(dir, s.with("path"), filepath.Base(a)))
				}
			case s.Run != "" && !strings.Contains(s.Run, "make -C .inferbench-src install"):
				if out, err := sh(dir, s.Run, vars); err != nil {
					t.Fatalf("step %q: %v\n%s", s.Name, err, out)
				}
			}
		}
	}

	// main's baseline, in the store the merge job restores from the cache.
	mergeDir := project("merge")
	for _, c := range []string{"inferbench run --format none", "inferbench baseline set main latest"} {
		if out, err := sh(mergeDir, c, nil); err != nil {
			t.Fatalf("%s: %v\n%s", c, err, out)
		}
	}
	shards := w.Jobs["bench-shard"].Strategy.Matrix["shard"]
	for i, v := range shards {
		vars := map[string]string{"strategy.job-index": fmt.Sprint(i), "strategy.job-total": fmt.Sprint(len(shards)), "matrix.shard": fmt.Sprint(v)}
		commands(w.Jobs["bench-shard"], project(fmt.Sprintf("shard%d", i)), vars)
	}
	mg := w.Jobs["bench-merge"]
	mg.Steps = slices.DeleteFunc(slices.Clone(mg.Steps), func(s step) bool { return strings.Contains(s.Run, "inferbench merge") })
	commands(mg, mergeDir, map[string]string{"github.run_id": "4242"})
	// The merge step itself: exit 0, or 3 when the mock's noise reads as a regression.
	var mergeRun string
	for _, s := range w.Jobs["bench-merge"].Steps {
		if strings.Contains(s.Run, "inferbench merge") {
			mergeRun = s.Run
		}
	}
	out, err := sh(mergeDir, mergeRun, nil)
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 3) {
		t.Fatalf("%s: %v\n%s", mergeRun, err, out)
	}
	m, err := result.Load(filepath.Join(mergeDir, "benchmark_results", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Merged == nil || m.Merged.Group != "gha-4242-2" || m.Merged.Count != len(shards) || len(m.Merged.Parts) != len(shards) || len(m.Merged.Missing) != 0 {
		t.Fatalf("merged run: %+v\n%s", m.Merged, out)
	}
	seen := map[string]int{}
	for _, s := range m.Scenarios {
		seen[s.ID()]++
	}
	if len(seen) != 12 || len(m.Scenarios) != 12 {
		t.Errorf("merged %d scenarios (%d distinct), the suite has 12", len(m.Scenarios), len(seen))
	}
	if _, err := os.Stat(filepath.Join(mergeDir, "benchmark_results", "latest", "compare.json")); err != nil {
		t.Errorf("the merge compared nothing with main: %v\n%s", err, out)
	}
}

// copyTree copies src into dst, following symbolic links as upload-artifact does.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	src, err := filepath.EvalSymlinks(src)
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := os.Stat(p) // follows links
		if err != nil {
			return err
		}
		if info.IsDir() {
			if d.Type()&fs.ModeSymlink != 0 {
				copyTree(t, p, target)
				return nil
			}
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
}

// TestBaselineRefJob runs the pull-request job that measures the change against its base branch
// in the same job (bench-ref) as a runner would: in a clone whose origin/main is the base (what
// fetch-depth: 0 gives), a commit that leaves the benchmark alone passes, and one that makes its
// command twice as slow fails the job with exit code 3.
func TestBaselineRefJob(t *testing.T) {
	w := load(t)
	j, ok := w.Jobs["bench-ref"]
	if !ok {
		t.Fatal("no job bench-ref")
	}
	if !strings.Contains(j.If, "pull_request") {
		t.Errorf("bench-ref if: %q, want it on pull requests", j.If)
	}
	co := j.find("actions/checkout")
	if co == nil || co.With["path"] != nil || co.with("fetch-depth") != "0" {
		t.Fatalf("bench-ref: the project's checkout must fetch the base branch's commits (fetch-depth: 0): %+v", co)
	}
	var script string
	for _, s := range j.Steps {
		if strings.Contains(s.Run, "inferbench run") {
			script = s.Run
		}
	}
	if !strings.Contains(script, `--baseline-ref "origin/${{ github.base_ref }}"`) {
		t.Fatalf("bench-ref runs %q, want --baseline-ref \"origin/${{ github.base_ref }}\"", script)
	}
	for _, tool := range []string{"bash", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s to run the job's commands: %v", tool, err)
		}
	}
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	os.MkdirAll(bin, 0o755)
	self, _ := filepath.Abs(os.Args[0])
	if err := os.WriteFile(filepath.Join(bin, "inferbench"), []byte("#!/usr/bin/env bash\nINFERBENCH_TEST_MAIN=1 exec "+self+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(root, "repo")
	os.MkdirAll(filepath.Join(repo, "benches"), 0o755)
	env := append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "INFERBENCH_STORE=", "CI=1", "GITHUB_STEP_SUMMARY=",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	sh := func(script string) (int, string) {
		t.Helper()
		script = strings.ReplaceAll(script, "${{ github.base_ref }}", "main")
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
		cmd.Dir, cmd.Env = repo, env
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	bench := func(secs string) {
		def := "name: nap\nsubject: {kind: exec, command: [sleep, \"" + secs + "\"]}\nload: {warmup_iterations: 1, measurement_iterations: 30}\n"
		if err := os.WriteFile(filepath.Join(repo, "benches", "nap.yaml"), []byte(def), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bench("0.01")
	if code, out := sh("git init -q && git add -A && git commit -qm base && git update-ref refs/remotes/origin/main HEAD"); code != 0 {
		t.Fatal(out)
	}
	// A pull request that does not touch the benchmark.
	if code, out := sh("echo docs > README && git add README && git commit -qm docs"); code != 0 {
		t.Fatal(out)
	}
	if code, out := sh(script); code != 0 {
		t.Fatalf("unchanged benchmark: exit %d, want 0\n%s", code, out)
	}
	// A pull request that makes it twice as slow.
	bench("0.02")
	if code, out := sh("git commit -qam slower"); code != 0 {
		t.Fatal(out)
	}
	code, out := sh(script)
	if code != 3 || !strings.Contains(out, "origin/main") {
		t.Fatalf("2x slower: exit %d, want 3 naming origin/main\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(repo, "benchmark_results", "latest", "compare.md")); err != nil {
		t.Errorf("no compare.md for the job summary: %v", err)
	}
}
