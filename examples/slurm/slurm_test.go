// Package slurm holds the Slurm deployment of a sharded suite (a job array and a dependent merge
// job); its test runs the scripts as Slurm would, with a stand-in sbatch, and checks their shard
// arithmetic.
package slurm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/cli"
	"github.com/inferbench/inferbench/result"
)

// TestMain lets the scripts call this test binary as inferbench (INFERBENCH_TEST_MAIN=1).
func TestMain(m *testing.M) {
	if os.Getenv("INFERBENCH_TEST_MAIN") == "1" {
		os.Exit(cli.Main(context.Background(), os.Args[1:], cli.IO{Stdout: os.Stdout, Stderr: os.Stderr}))
	}
	os.Exit(m.Run())
}

// project makes a folder with a 10-scenario mock suite and copies of the scripts.
func project(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "benches", "unit"), 0o755)
	def := "name: grid\nsubject: {kind: mock, latency_ms: 0.1}\nmatrix:\n  batch_size: [1, 2, 3, 4, 5]\n  variant: [eager, compiled]\nload: {mode: single, warmup_iterations: 0, measurement_iterations: 3}\n"
	if err := os.WriteFile(filepath.Join(dir, "benches", "unit", "grid.yaml"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"shard.sbatch", "merge.sbatch", "submit.sh"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// arrayRange reads the script's #SBATCH --array=MIN-MAX.
func arrayRange(t *testing.T) (lo, hi int) {
	t.Helper()
	data, _ := os.ReadFile("shard.sbatch")
	m := regexp.MustCompile(`(?m)^#SBATCH --array=(\d+)-(\d+)\s*$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("shard.sbatch has no #SBATCH --array=MIN-MAX line")
	}
	lo, _ = strconv.Atoi(string(m[1]))
	hi, _ = strconv.Atoi(string(m[2]))
	return lo, hi
}

func script(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(dir, name)}, args...)...)
	cmd.Dir = dir
	self, _ := filepath.Abs(os.Args[0])
	cmd.Env = append(os.Environ(), append([]string{"INFERBENCH=" + self, "INFERBENCH_TEST_MAIN=1", "INFERBENCH_STORE=", "CI=1"}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// TestArrayShardArithmetic dry-runs every task of the array, numbered as the script's --array
// says and shifted to start at 1, and checks each scenario is run by exactly one task.
func TestArrayShardArithmetic(t *testing.T) {
	dir := project(t)
	lo, hi := arrayRange(t)
	all := script(t, dir, []string{"SLURM_ARRAY_JOB_ID=1", "SLURM_ARRAY_TASK_ID=0"}, "shard.sbatch", "--enable-mock", "--dry-run", "--shard", "0/1")
	want := len(strings.Split(strings.TrimSpace(all), "\n"))
	for _, shift := range []int{0, 1 - lo} { // as written, and as --array=1-N
		seen := map[string]int{}
		for task := lo + shift; task <= hi+shift; task++ {
			env := []string{fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", task), fmt.Sprintf("SLURM_ARRAY_TASK_COUNT=%d", hi-lo+1),
				fmt.Sprintf("SLURM_ARRAY_TASK_MIN=%d", lo+shift), "SLURM_ARRAY_TASK_STEP=1", "SLURM_ARRAY_JOB_ID=900"}
			out := script(t, dir, env, "shard.sbatch", "--enable-mock", "--dry-run")
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				if l != "" {
					seen[strings.Fields(l)[0]]++
				}
			}
		}
		if len(seen) != want {
			t.Errorf("shift %d: the array ran %d distinct scenarios, the suite has %d", shift, len(seen), want)
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("shift %d: %s ran in %d tasks", shift, id, n)
			}
		}
	}
}

// TestSubmitAndMerge submits with a stand-in sbatch, runs the array's tasks and the merge job as
// Slurm would, and checks the dependency, the group and the merged run.
func TestSubmitAndMerge(t *testing.T) {
	dir := project(t)
	bin := t.TempDir()
	fake := "#!/usr/bin/env bash\necho \"$*\" >> " + filepath.Join(bin, "calls") + "\nn=$(wc -l < " + filepath.Join(bin, "calls") + ")\necho \"$((4241 + n));cluster\"\n"
	os.WriteFile(filepath.Join(bin, "sbatch"), []byte(fake), 0o755)
	out := script(t, dir, []string{"PATH=" + bin + ":" + os.Getenv("PATH")}, "submit.sh")
	calls, _ := os.ReadFile(filepath.Join(bin, "calls"))
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	if len(lines) != 2 || lines[0] != "--parsable shard.sbatch" ||
		lines[1] != "--parsable --dependency=afterany:4242 --export=ALL,ARRAY_JOB_ID=4242 merge.sbatch" {
		t.Fatalf("sbatch calls:\n%s", calls)
	}
	if !strings.Contains(out, "group slurm-4242") {
		t.Errorf("submit.sh said %q", out)
	}
	lo, hi := arrayRange(t)
	for task := lo; task <= hi; task++ {
		env := []string{fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", task), fmt.Sprintf("SLURM_ARRAY_TASK_COUNT=%d", hi-lo+1),
			fmt.Sprintf("SLURM_ARRAY_TASK_MIN=%d", lo), "SLURM_ARRAY_JOB_ID=4242"}
		script(t, dir, env, "shard.sbatch", "--enable-mock", "--format", "none")
	}
	script(t, dir, []string{"ARRAY_JOB_ID=4242"}, "merge.sbatch", "--format", "none", "--no-store")
	m, err := result.Load(filepath.Join(dir, "results", "slurm-4242", "merged", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Merged == nil || m.Merged.Group != "slurm-4242" || m.Merged.Count != hi-lo+1 || len(m.Merged.Missing) != 0 || m.Summary.Total != 10 || m.Summary.Succeeded != 10 {
		t.Errorf("merged run: %+v summary %+v", m.Merged, m.Summary)
	}
}
