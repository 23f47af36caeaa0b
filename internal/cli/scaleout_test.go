package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/testkit/schematest"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
)

// matrixProject writes a definition of 12 mock scenarios.
func matrixProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "benches", "unit"), 0o755)
	def := `name: matrix
subject: {kind: mock, latency_ms: 0.2, jitter: 0.01}
matrix:
  batch_size: [1, 2, 4, 8]
  variant: [eager, compiled, kernelized]
load: {mode: single, warmup_iterations: 0, measurement_iterations: 5}
`
	if err := os.WriteFile(filepath.Join(dir, "benches", "unit", "m.yaml"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func scenarioIDs(r *result.Run) []string {
	var ids []string
	for _, sc := range r.Scenarios {
		ids = append(ids, sc.ID())
	}
	slices.Sort(ids)
	return ids
}

// TestShardRunsMergeToTheSuite runs a suite unsharded and as 5 shards (one of them auto from a
// Kubernetes environment), merges the shard folders, and checks the merged run holds the same
// scenarios with their measured iteration counts, each shard's environment, and validates.
func TestShardRunsMergeToTheSuite(t *testing.T) {
	proj := matrixProject(t)
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, proj, nil, "run", "--enable-mock", "--no-store", "--format", "none", "--output-dir", filepath.Join(out, "single"))
	if code != 0 {
		t.Fatalf("single run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	single, err := result.Load(filepath.Join(out, "single", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	var folders []string
	assigned := 0
	for i := range n {
		args := []string{"run", "--enable-mock", "--no-store", "--format", "none", "--group", "g-test", "--output-dir", filepath.Join(out, fmt.Sprint(i))}
		var env []string
		if i == 3 {
			args = append(args, "--shard", "auto")
			env = []string{"JOB_COMPLETION_INDEX=3", fmt.Sprintf("JOB_COMPLETIONS=%d", n)}
		} else {
			args = append(args, "--shard", fmt.Sprintf("%d/%d", i, n))
		}
		code, stdout, stderr := runCLI(t, proj, env, args...)
		if code != 0 {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, code, stdout, stderr)
		}
		f := filepath.Join(out, fmt.Sprint(i), "latest")
		r, err := result.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if r.Shard == nil || r.Shard.Index != i || r.Shard.Count != n || r.Shard.Planned != 12 || r.Shard.Group != "g-test" {
			t.Fatalf("shard %d recorded %+v", i, r.Shard)
		}
		assigned += len(r.Scenarios)
		folders = append(folders, f)
	}
	if assigned != 12 {
		t.Fatalf("shards ran %d scenarios, want 12", assigned)
	}
	code, stdout, stderr = runCLI(t, proj, nil, append([]string{"merge", "--no-store", "--output-dir", filepath.Join(out, "merged")}, folders...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "merged 5 of 5 shards of group g-test") {
		t.Errorf("merge output:\n%s", stdout)
	}
	data, err := os.ReadFile(filepath.Join(out, "merged", "latest", result.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	schematest.ValidateRun(t, data)
	var m result.Run
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(scenarioIDs(&m), scenarioIDs(single)) {
		t.Errorf("merged scenarios %v\nsingle run %v", scenarioIDs(&m), scenarioIDs(single))
	}
	for _, sc := range m.Scenarios {
		if sc.Status != result.StatusOK || sc.Iterations.Measured != 5 || len(sc.Metrics["latency_ms"].Samples) != 5 {
			t.Errorf("%s: %s, %d measured, %d samples", sc.ID(), sc.Status, sc.Iterations.Measured, len(sc.Metrics["latency_ms"].Samples))
		}
	}
	if m.Summary != single.Summary || len(m.Merged.Parts) != n || m.Merged.Parts[2].Environment == nil {
		t.Errorf("summary %+v (single %+v), parts %d", m.Summary, single.Summary, len(m.Merged.Parts))
	}

	// Without shard 4 the merge names it and fails the gate, unless allowed.
	code, stdout, stderr = runCLI(t, proj, nil, append([]string{"merge", "--no-store", "--output-dir", filepath.Join(out, "m2")}, folders[:4]...)...)
	if code != ExitError || !strings.Contains(stderr, "shard 4/5: no run") || !strings.Contains(stdout, "missing: shard 4/5: no run") {
		t.Errorf("missing shard: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = runCLI(t, proj, nil, append([]string{"merge", "--no-store", "--allow-missing", "--output-dir", filepath.Join(out, "m3")}, folders[:4]...)...)
	if code != 0 {
		t.Errorf("--allow-missing: exit %d\n%s", code, stderr)
	}
}

func TestShardFlagErrors(t *testing.T) {
	proj := matrixProject(t)
	for _, c := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"--shard", "5/5", "--group", "g"}, nil, "0-based"},
		{[]string{"--shard", "auto", "--group", "g"}, []string{"JOB_COMPLETION_INDEX=1"}, "JOB_COMPLETIONS"},
		{[]string{"--agents", "4", "--group", "g"}, nil, "--agent"},
		{[]string{"--agents", "4", "--agent", "4", "--group", "g"}, nil, "want 0 to 3"},
		{[]string{"--agents", "2", "--agent", "1", "--group", "g", "--start-at", "soon"}, nil, "RFC 3339"},
		{[]string{"--agents", "2", "--agent", "1", "--group", "g", "--shard", "0/2"}, nil, "not both"},
	} {
		code, _, stderr := runCLI(t, proj, c.env, append([]string{"run", "--enable-mock", "--no-store", "--dry-run"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	// A run without a group is refused; a dry run lists the shard without one.
	if code, _, stderr := runCLI(t, proj, nil, "run", "--enable-mock", "--no-store", "--shard", "1/5"); code != ExitUsage || !strings.Contains(stderr, "need a run group") {
		t.Errorf("--shard 1/5 without a group: exit %d, stderr %q; want 2 and a run group asked for", code, stderr)
	}
	k8s := []string{"JOB_COMPLETION_INDEX=2", "JOB_COMPLETIONS=3"}
	if code, out, stderr := runCLI(t, proj, k8s, "run", "--enable-mock", "--no-store", "--dry-run", "--shard", "auto"); code != 0 || out == "" {
		t.Errorf("dry run of a Kubernetes shard without a group: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	// In an Indexed Job's pod the group is the Job's name, from the pod's host <job>-<index>.
	out := t.TempDir()
	if code, _, stderr := runCLI(t, proj, append(k8s, "HOSTNAME=matrix-9-2"), "run", "--enable-mock", "--no-store", "--format", "none", "--shard", "auto", "--output-dir", out); code != 0 {
		t.Fatalf("Kubernetes shard: exit %d: %s", code, stderr)
	}
	r, err := result.Load(filepath.Join(out, "latest"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Shard == nil || r.Shard.Group != "matrix-9" || r.Shard.Index != 2 || r.Shard.Count != 3 {
		t.Errorf("Kubernetes shard recorded %+v, want group matrix-9, shard 2/3", r.Shard)
	}
	// A dry run lists exactly the shard's scenarios; the shards of 3 list all 12 once.
	seen := map[string]int{}
	for i := range 3 {
		code, out, stderr := runCLI(t, proj, []string{"SLURM_ARRAY_TASK_ID=" + fmt.Sprint(i+1), "SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_JOB_ID=77"},
			"run", "--enable-mock", "--dry-run", "--shard", "auto")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			seen[strings.Fields(l)[0]]++
		}
	}
	if len(seen) != 12 {
		t.Errorf("dry runs of 3 shards listed %d scenarios, want 12: %v", len(seen), seen)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("%s listed by %d shards", id, k)
		}
	}
}

// TestMergeInterruptedShard: a shard whose run did not finish is named and fails the gate; with
// --allow-missing the merge passes (it failed as "interrupted" before the merged run stopped
// inheriting the part's partial flag).
func TestMergeInterruptedShard(t *testing.T) {
	proj := matrixProject(t)
	out := t.TempDir()
	var folders []string
	for i := range 2 {
		code, stdout, stderr := runCLI(t, proj, nil, "run", "--enable-mock", "--no-store", "--format", "none", "--group", "g-int", "--shard", fmt.Sprintf("%d/2", i), "--output-dir", filepath.Join(out, fmt.Sprint(i)))
		if code != 0 {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, code, stdout, stderr)
		}
		folders = append(folders, filepath.Join(out, fmt.Sprint(i), "latest"))
	}
	// Shard 1 was interrupted: its run.json says partial.
	r, err := result.Load(folders[1])
	if err != nil {
		t.Fatal(err)
	}
	r.Partial = true
	if err := result.Save(folders[1], r); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, proj, nil, append([]string{"merge", "--no-store", "--format", "none", "--output-dir", filepath.Join(out, "m1")}, folders...)...)
	if code != ExitError || !strings.Contains(stderr, "shard 1/2: run "+r.ID+" did not finish (partial)") {
		t.Errorf("interrupted shard: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCLI(t, proj, nil, append([]string{"merge", "--no-store", "--allow-missing", "--format", "none", "--output-dir", filepath.Join(out, "m2")}, folders...)...)
	if code != 0 {
		t.Errorf("--allow-missing with an interrupted shard: exit %d, %s", code, stderr)
	}
}

// TestMergeGroupFromStore: shards recorded in the (shared) store are found by their group,
// other groups' runs are left out, and the merged run is recorded too.
func TestMergeGroupFromStore(t *testing.T) {
	proj := matrixProject(t)
	for i := range 3 {
		code, stdout, stderr := runCLI(t, proj, nil, "run", "--enable-mock", "--format", "none", "--group", "g-store", "--shard", fmt.Sprintf("%d/3", i))
		if code != 0 {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, code, stdout, stderr)
		}
	}
	// Another group's shard in the same store.
	if code, _, stderr := runCLI(t, proj, nil, "run", "--enable-mock", "--format", "none", "--group", "other", "--shard", "0/3"); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, stderr := runCLI(t, proj, nil, "merge", "--group", "g-store")
	if code != 0 || !strings.Contains(stdout, "merged 3 of 3 shards of group g-store") {
		t.Fatalf("merge --group: exit %d\n%s\n%s", code, stdout, stderr)
	}
	m, err := result.Load(filepath.Join(proj, "benchmark_results", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Merged == nil || m.Summary.Total != 12 {
		t.Fatalf("merged run %+v", m.Summary)
	}
	code, stdout, _ = runCLI(t, proj, nil, "history", "--runs")
	if code != 0 || !strings.Contains(stdout, m.ID) {
		t.Errorf("the merged run %s is not in the store:\n%s", m.ID, stdout)
	}
	if code, _, stderr := runCLI(t, proj, nil, "merge", "--group", "nobody"); code != ExitError || !strings.Contains(stderr, `no run of group "nobody"`) {
		t.Errorf("unknown group: exit %d %s", code, stderr)
	}
}

// A group with no run in the store names the store it looked in, the default file included (it
// used to print an empty name: "in the store  since").
func TestMergeUnknownGroupNamesTheStore(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI(t, dir, nil, "merge", "--group", "nobody")
	want := `no run of group "nobody" in the store ` + filepath.Join(dir, store.DefaultPath) + " since "
	if code != ExitError || !strings.Contains(stderr, want) {
		t.Errorf("merge --group nobody: exit %d, want 1 and %q in\n%s", code, want, stderr)
	}
}

// shardSuite runs the suite of proj as n shards of group into out/<i> (recorded in the store
// unless noStore), and returns their latest folders.
func shardSuite(t *testing.T, proj, out, group string, n int, extra ...string) []string {
	t.Helper()
	var folders []string
	for i := range n {
		dir := filepath.Join(out, fmt.Sprint(i))
		args := append([]string{"run", "--enable-mock", "--no-store", "--format", "none", "--group", group, "--shard", fmt.Sprintf("%d/%d", i, n), "--output-dir", dir}, extra...)
		if code, stdout, stderr := runCLI(t, proj, nil, args...); code != 0 {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, code, stdout, stderr)
		}
		folders = append(folders, filepath.Join(dir, "latest"))
	}
	return folders
}

// TestMergedRunIsJudged: compare, budgets, reports and the exit codes work on a merged run as on
// any run. The baseline main is the suite at 1 ms; the shards run it at 5 ms, and `merge
// --baseline main` exits 3 with compare.json naming every scenario a regression; a budget
// exceeded exits 3 without a baseline; `compare` and `report` read the merged folder.
func TestMergedRunIsJudged(t *testing.T) {
	proj := matrixProject(t)
	def := filepath.Join(proj, "benches", "unit", "m.yaml")
	setLatency := func(from, to string) {
		data := string(mustRead(t, def))
		if !strings.Contains(data, "latency_ms: "+from+",") {
			t.Fatalf("%s has no latency_ms: %s", def, from)
		}
		if err := os.WriteFile(def, []byte(strings.Replace(data, "latency_ms: "+from+",", "latency_ms: "+to+",", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setLatency("0.2", "1")
	iters := []string{"--measurement-iterations", "20"}
	if code, stdout, stderr := runCLI(t, proj, nil, append([]string{"run", "--enable-mock", "--format", "none", "--output-dir", "base"}, iters...)...); code != 0 {
		t.Fatalf("baseline run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, proj, nil, "baseline", "set", "main", "latest"); code != 0 {
		t.Fatalf("baseline set: %s", stderr)
	}
	setLatency("1", "5")
	out := t.TempDir()
	folders := shardSuite(t, proj, out, "g-judged", 3, iters...)

	// merge --baseline main: a regression exits 3, and the comparison is written beside the run.
	code, stdout, stderr := runCLI(t, proj, nil, append([]string{"merge", "--baseline", "main", "--output-dir", filepath.Join(out, "merged")}, folders...)...)
	if code != ExitRegression {
		t.Fatalf("merge --baseline main of 5x slower shards: exit %d, want 3\n%s\n%s", code, stdout, stderr)
	}
	merged := filepath.Join(out, "merged", "latest")
	var rep struct {
		Rows []struct {
			Benchmark, Scenario, Metric, Verdict string
		} `json:"rows"`
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(merged, "compare.json")), &rep); err != nil {
		t.Fatalf("compare.json: %v", err)
	}
	regressed := map[string]bool{}
	for _, r := range rep.Rows {
		if r.Metric == "latency_ms" && r.Verdict == "regression" {
			regressed[r.Scenario] = true
		}
	}
	if len(regressed) != 12 {
		t.Errorf("compare.json of the merged run: %d of 12 scenarios' latency regressed: %v", len(regressed), regressed)
	}
	if _, err := os.Stat(filepath.Join(merged, "report.html")); err != nil {
		t.Errorf("merged run has no report.html: %v", err)
	}
	m, err := result.Load(merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Config.Args) == 0 || m.Config.Args[0] != "merge" || slices.Contains(m.Config.Args, "--shard") {
		t.Errorf("merged run's command line %q, want the merge's", m.Config.Args)
	}
	for _, p := range m.Merged.Parts {
		if !slices.Contains(p.Args, fmt.Sprintf("%d/3", p.Index)) {
			t.Errorf("part %d's command line %q lacks its --shard", p.Index, p.Args)
		}
	}

	// compare and report read the merged folder like any run folder.
	if code, stdout, stderr := runCLI(t, proj, nil, "compare", "baseline:main", merged, "--format", "text"); code != ExitRegression || !strings.Contains(stdout, "latency_ms") {
		t.Errorf("compare baseline:main MERGED: exit %d, want 3\n%s\n%s", code, stdout, stderr)
	}
	html := filepath.Join(t.TempDir(), "merged.html")
	if code, _, stderr := runCLI(t, proj, nil, "report", merged, "-o", html); code != 0 {
		t.Errorf("report MERGED: exit %d\n%s", code, stderr)
	} else if page := string(mustRead(t, html)); !strings.Contains(page, "batch_size=8") || !strings.Contains(page, "inferbench merge") {
		t.Errorf("report of the merged run lacks its scenarios or its command line")
	}

	// A budget over the merged run exits 3 without a baseline.
	os.WriteFile(filepath.Join(proj, "performance-budget.yml"), []byte("budgets:\n  matrix:\n    max_latency_ms: 2\n"), 0o644)
	code, stdout, stderr = runCLI(t, proj, nil, append([]string{"merge", "--output-dir", filepath.Join(out, "budget")}, folders...)...)
	if code != ExitRegression || !strings.Contains(stdout+stderr, "budget") {
		t.Errorf("merge over a 2 ms budget of 5 ms shards: exit %d, want 3\n%s\n%s", code, stdout, stderr)
	}
	// Within the budget it passes.
	os.WriteFile(filepath.Join(proj, "performance-budget.yml"), []byte("budgets:\n  matrix:\n    max_latency_ms: 500\n"), 0o644)
	if code, stdout, stderr = runCLI(t, proj, nil, append([]string{"merge", "--output-dir", filepath.Join(out, "budget-ok")}, folders...)...); code != 0 {
		t.Errorf("merge within a 500 ms budget: exit %d, want 0\n%s\n%s", code, stdout, stderr)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
