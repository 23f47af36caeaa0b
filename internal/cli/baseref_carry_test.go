package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/cli/ab"
	"github.com/inferbench/inferbench/result"
)

// A definition file named on the command line that the ref does not have (one written for this
// run, as the pytest plugin's for --inferbench-baseline-ref) is run at the ref as the working tree
// has it, each side in its own tree: here it runs the tree's script, which the working tree made
// 2x slower, so the run finds the regression (exit 3) and names the carried file in run.json.
// Before, the run stopped at "is not at HEAD" (exit 2).
func TestBaselineRefCarriesNamedDefinition(t *testing.T) {
	repo := gitRepo(t, map[string]string{"work.sh": "sleep 0.01\n", "benches/keep.yaml": "name: keep\nsubject: {kind: exec, command: [\"true\"]}\n"})
	writeFiles(t, repo, map[string]string{
		"work.sh": "sleep 0.02\n",
		"nap.yaml": `name: nap
subject: {kind: exec, command: ["sh", "work.sh"]}
load: {warmup_iterations: 1, measurement_iterations: 30}
`})
	code, stdout, stderr := runCLI(t, repo, nil, "run", "--baseline-ref", "HEAD", "nap.yaml", "--no-store", "--no-html-report")
	if code != 3 {
		t.Fatalf("exit %d, want 3 (the working tree's script is 2x slower)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r, err := result.Load(filepath.Join(repo, "benchmark_results", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	carried, _ := result.EnvValue(r.Environment, ab.SectionBaselineRef, "carried").([]any)
	if len(carried) != 1 || carried[0] != "nap.yaml" {
		t.Errorf("environment.baseline_ref.carried = %v, want [nap.yaml]", result.EnvValue(r.Environment, ab.SectionBaselineRef, "carried"))
	}
	checkNoWorktree(t, repo)
	// A definition the tree discovers (not named) and the ref lacks still has no baseline.
	writeFiles(t, repo, map[string]string{"benches/extra.yaml": "name: extra\nsubject: {kind: exec, command: [\"true\"]}\n"})
	code, _, stderr = runCLI(t, repo, nil, "run", "--baseline-ref", "HEAD", "--no-store")
	if code != 2 || !strings.Contains(stderr, "is not at HEAD") {
		t.Errorf("discovered definition absent at the ref: exit %d, want 2\n%s", code, stderr)
	}
}
