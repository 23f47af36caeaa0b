package tracker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/internal/testkit/mlflowtest"
	"github.com/inferbench/inferbench/result"
)

// fixture returns a run folder written from a real run.json (result/testdata/v1/serving.json:
// iteration and serving scenarios), its serving scenario concurrency=4 given two time slices as
// the serving load writes them (result.SliceStat), and the run.
func fixture(t *testing.T) (string, *result.Run) {
	t.Helper()
	r, err := result.Load("../../result/testdata/v1/serving.json")
	if err != nil {
		t.Fatal(err)
	}
	s := scenarioOf(t, r, "serving-mock/concurrency=4")
	s.Extra.Slices = []result.SliceStat{
		{StartS: 0, EndS: 1, Requests: 10, RPS: 10, Quantiles: map[string]float64{"ttft_ms.p50": 11, "ttft_ms.p99": 19}},
		{StartS: 1, EndS: 2, Requests: 12, RPS: 12, Quantiles: map[string]float64{"ttft_ms.p50": 12, "ttft_ms.p99": 29}},
	}
	dir := t.TempDir()
	if err := result.Save(dir, r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.html"), []byte("<html>report</html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, r
}

func scenarioOf(t *testing.T, r *result.Run, id string) *result.Scenario {
	t.Helper()
	for i := range r.Scenarios {
		if r.Scenarios[i].ID() == id {
			return &r.Scenarios[i]
		}
	}
	t.Fatalf("no scenario %s in run %s", id, r.ID)
	return nil
}

// TestMLflowExport: a real run.json sent to the strict fake server makes one parent run (the
// run's tags, its files uploaded as artifacts) and a child run per scenario under it (params,
// metrics named as docs/metrics.md names them, time slices as steps), all ended FINISHED.
func TestMLflowExport(t *testing.T) {
	dir, r := fixture(t)
	srv := mlflowtest.Start(t)
	p := From(r, Options{Dir: dir, Verdict: "pass"})
	got, err := ExportMLflow(context.Background(), p, MLflowOptions{TrackingURI: srv.URL, Env: []string{"MLFLOW_EXPERIMENT_NAME=bench"}})
	if err != nil {
		t.Fatal(err)
	}
	runs := srv.Runs()
	if len(runs) != 1+len(r.Scenarios) || len(got.Runs) != len(r.Scenarios) {
		t.Fatalf("%d runs on the server, %d reported; want 1 + %d", len(runs), len(got.Runs), len(r.Scenarios))
	}
	if srv.Experiment("bench") == "" {
		t.Errorf("experiment bench (MLFLOW_EXPERIMENT_NAME) not created")
	}
	parent := runs[0]
	if parent.ID != got.Parent.ID || parent.Status != "FINISHED" || parent.Name != r.ID {
		t.Errorf("parent run %s %q %s, want %s %q FINISHED", parent.ID, parent.Name, parent.Status, got.Parent.ID, r.ID)
	}
	for k, want := range map[string]string{
		"inferbench.run_id": r.ID, "inferbench.status": "ok", "inferbench.verdict": "pass", "inferbench.version": "dev",
		"git.commit": "a72d9719b202bd13b8da598a2e4dfefb29398387", "git.branch": "i16", "git.dirty": "false", "host": "vm",
		"mlflow.source.git.commit": "a72d9719b202bd13b8da598a2e4dfefb29398387", "mlflow.runName": r.ID,
	} {
		if parent.Tags[k] != want {
			t.Errorf("parent tag %s = %q, want %q", k, parent.Tags[k], want)
		}
	}
	runJSON, _ := os.ReadFile(filepath.Join(dir, result.RunFile))
	if string(parent.Artifacts[result.RunFile]) != string(runJSON) || len(runJSON) == 0 {
		t.Errorf("run.json artifact: %d bytes, want the folder's %d", len(parent.Artifacts[result.RunFile]), len(runJSON))
	}
	for _, name := range []string{"report.html", "summary.csv"} {
		if len(parent.Artifacts[name]) == 0 {
			t.Errorf("artifact %s not uploaded (have %v)", name, keys(parent.Artifacts))
		}
	}

	byName := map[string]*mlflowtest.Run{}
	for _, c := range runs[1:] {
		byName[c.Name] = c
		if c.Tags["mlflow.parentRunId"] != parent.ID || c.Status != "FINISHED" {
			t.Errorf("child %s: parent %q status %s, want %s FINISHED", c.Name, c.Tags["mlflow.parentRunId"], c.Status, parent.ID)
		}
	}
	vision := byName["vision-mock/batch_size=8/variant=eager"]
	serving := byName["serving-mock/concurrency=4"]
	if vision == nil || serving == nil {
		t.Fatalf("children %v: want vision-mock/batch_size=8/variant=eager and serving-mock/concurrency=4", keys(byName))
	}
	wantParams := map[string]string{"benchmark": "vision-mock", "scenario": "batch_size=8/variant=eager", "subject": "mock",
		"model": "resnet50", "category": "performance", "batch_size": "8", "dtype": "float32", "device": "simulated", "variant": "eager"}
	if diff := cmp.Diff(wantParams, vision.Params); diff != "" {
		t.Errorf("vision params (-want +got):\n%s", diff)
	}
	if serving.Params["concurrency"] != "4" {
		t.Errorf("serving params %v: want concurrency 4", serving.Params)
	}
	sc := scenarioOf(t, r, "serving-mock/concurrency=4")
	ttft := sc.Metrics["ttft_ms"].Summary
	for name, want := range map[string]float64{
		"ttft_ms.mean": ttft.Mean, "ttft_ms.p50": ttft.Median, "ttft_ms.p90": ttft.P90, "ttft_ms.p99": ttft.P99,
		"requests_per_s": *sc.Metrics["requests_per_s"].Value,
	} {
		if pts := serving.Metrics[name]; len(pts) != 1 || pts[0].Value != want {
			t.Errorf("serving metric %s = %v, want one point %v", name, pts, want)
		}
	}
	for name := range serving.Metrics {
		base, _, _ := strings.Cut(strings.TrimPrefix(name, SlicePrefix), ".")
		if _, ok := sc.Metrics[base]; !ok && !strings.HasPrefix(name, SlicePrefix) {
			t.Errorf("metric %s: not one of the scenario's metrics in run.json", name)
		}
	}
	if diff := cmp.Diff([]mlflowtest.Point{{Value: 19, Timestamp: sc.StartedAt.UnixMilli(), Step: 0},
		{Value: 29, Timestamp: sc.StartedAt.UnixMilli() + 1000, Step: 1}}, serving.Metrics["slices/ttft_ms.p99"]); diff != "" {
		t.Errorf("slices/ttft_ms.p99 steps (-want +got):\n%s", diff)
	}
	if len(serving.Metrics["slices/requests_per_s"]) != 2 {
		t.Errorf("slices/requests_per_s: %v, want 2 steps", serving.Metrics["slices/requests_per_s"])
	}
	if _, ok := vision.Metrics["slices/ttft_ms.p99"]; ok {
		t.Errorf("an iteration scenario has no time slices, got steps")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestMLflowBatchLimits: a scenario of 1,500 metrics and 150 params goes in several
// runs/log-batch calls, each within MLflow's limits (the fake refuses more), nothing lost.
func TestMLflowBatchLimits(t *testing.T) {
	srv := mlflowtest.Start(t)
	s := Scenario{ID: "big/default", Status: "ok", Params: map[string]string{}, Metrics: map[string]float64{}}
	for i := range 150 {
		s.Params[fmt.Sprintf("p%03d", i)] = fmt.Sprint(i)
	}
	for i := range 1500 {
		s.Metrics[fmt.Sprintf("m%04d", i)] = float64(i)
	}
	p := &Payload{RunID: "r1", Status: "failed", Tags: map[string]string{"inferbench.run_id": "r1"}, Scenarios: []Scenario{s}}
	if _, err := ExportMLflow(context.Background(), p, MLflowOptions{TrackingURI: srv.URL}); err != nil {
		t.Fatal(err)
	}
	runs := srv.Runs()
	child := runs[1]
	if len(child.Params) != 150 || len(child.Metrics) != 1500 || child.Metrics["m1499"][0].Value != 1499 {
		t.Errorf("child: %d params, %d metrics; want 150 and 1500", len(child.Params), len(child.Metrics))
	}
	if srv.Batches() < 3 { // the parent's tags, then at least two for the child
		t.Errorf("%d log-batch calls: the batch was not split", srv.Batches())
	}
	if runs[0].Status != "FAILED" {
		t.Errorf("parent of a failed run: %s, want FAILED", runs[0].Status)
	}
	if srv.Experiment(DefaultExperiment) == "" {
		t.Errorf("default experiment %s not created", DefaultExperiment)
	}
}

// TestMLflowServerError: a 500 is an error naming the tracker, the URL, the status and the body,
// and the run already created is ended FAILED rather than left RUNNING.
func TestMLflowServerError(t *testing.T) {
	dir, r := fixture(t)
	srv := mlflowtest.Start(t)
	srv.Fail = "runs/log-batch"
	_, err := ExportMLflow(context.Background(), From(r, Options{Dir: dir}), MLflowOptions{TrackingURI: srv.URL})
	if err == nil {
		t.Fatal("a 500 from runs/log-batch: no error")
	}
	for _, want := range []string{"mlflow", srv.URL + "/api/2.0/mlflow/runs/log-batch", "HTTP 500", "the fake fails as asked"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if runs := srv.Runs(); len(runs) == 0 || runs[0].Status != "FAILED" {
		t.Errorf("the parent run after the failure: %+v, want FAILED", runs)
	}
	// No server at all: the error names the URL.
	_, err = ExportMLflow(context.Background(), From(r, Options{Dir: dir}), MLflowOptions{TrackingURI: "http://127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "http://127.0.0.1:1/api/2.0/mlflow/experiments/get-by-name") {
		t.Errorf("dead server: %v, want an error naming the URL", err)
	}
	// A password in the tracking URI stays out of the message.
	srv.Fail = "experiments/get-by-name"
	_, err = ExportMLflow(context.Background(), From(r, Options{Dir: dir}),
		MLflowOptions{TrackingURI: strings.Replace(srv.URL, "http://", "http://u:hunter2@", 1)})
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "HTTP 500") {
		t.Errorf("tracking URI with a password: %v, want an HTTP 500 without the password", err)
	}
	// No tracking URI: the error says how to give one.
	_, err = ExportMLflow(context.Background(), From(r, Options{Dir: dir}), MLflowOptions{})
	if err == nil || !strings.Contains(err.Error(), "MLFLOW_TRACKING_URI") {
		t.Errorf("no tracking URI: %v, want an error naming MLFLOW_TRACKING_URI", err)
	}
}

// TestMLflowArtifactStores: a file: artifact root gets the files copied; one the server does not
// proxy (s3:) is a warning, not a failure.
func TestMLflowArtifactStores(t *testing.T) {
	dir, r := fixture(t)
	srv := mlflowtest.Start(t)
	art := t.TempDir()
	srv.ArtifactURI = "file://" + art
	got, err := ExportMLflow(context.Background(), From(r, Options{Dir: dir}), MLflowOptions{TrackingURI: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(art, got.Parent.ID, result.RunFile)); err != nil {
		t.Errorf("file: artifact root: %v", err)
	}
	srv.ArtifactURI = "s3://bucket/mlruns"
	got, err = ExportMLflow(context.Background(), From(r, Options{Dir: dir}), MLflowOptions{TrackingURI: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "s3://bucket/mlruns") {
		t.Errorf("s3: artifact root: warnings %q, want one naming the store", got.Warnings)
	}
	if st := srv.Runs()[len(srv.Runs())-1-len(r.Scenarios)].Status; st != "FINISHED" {
		t.Errorf("parent with artifacts not uploaded: %s, want FINISHED", st)
	}
}

// TestPayloadNames: every metric name is one a tracker takes, and a name it refuses is left out
// with a warning rather than renamed.
func TestPayloadNames(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"ttft_ms.p99", true},
		{"slices/requests_per_s", true},
		{"gpu util-pct 0", true},
		{"latency(ms)", false}, // parentheses
		{"a..b", false},        // MLflow refuses ".."
		{"/abs", false},        // and a leading /
		{"", false},
	} {
		if got := ValidName(c.name); got != c.ok {
			t.Errorf("ValidName(%q) = %v, want %v", c.name, got, c.ok)
		}
	}
	v := 1.0
	r := &result.Run{ID: "r", Scenarios: []result.Scenario{{Benchmark: "b", Scenario: "s", Status: "ok",
		Metrics: map[string]result.Metric{"ok_ms": {Value: &v}, "bad(ms)": {Value: &v}}}}}
	p := From(r, Options{})
	if _, ok := p.Scenarios[0].Metrics["ok_ms"]; !ok || len(p.Scenarios[0].Metrics) != 1 {
		t.Errorf("metrics %v: want ok_ms alone", p.Scenarios[0].Metrics)
	}
	if len(p.Warnings) != 2 || !strings.Contains(p.Warnings[1], `"bad(ms)"`) {
		t.Errorf("warnings %q: want no run folder, then bad(ms) not sent", p.Warnings)
	}
}
