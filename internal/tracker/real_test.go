//go:build unix

package tracker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/base/pyenv"
	"github.com/inferbench/inferbench/internal/testkit/require"
	"github.com/inferbench/inferbench/result"
)

// venvDir is the project's virtual environment (make venv), where requirements-trackers.txt
// puts mlflow and wandb.
var venvDir, _ = filepath.Abs("../../.venv")

// trackerTool returns the program name of the environment that the tests see (the active venv,
// then the project's .venv, then $PATH), or skips (fails under INFERBENCH_REQUIRE=trackers).
func trackerTool(t *testing.T, name string) string {
	t.Helper()
	var dirs []string
	if v := os.Getenv("VIRTUAL_ENV"); v != "" {
		dirs = append(dirs, filepath.Join(v, "bin"))
	}
	dirs = append(dirs, filepath.Join(venvDir, "bin"))
	for _, d := range dirs {
		if fi, err := os.Stat(filepath.Join(d, name)); err == nil && fi.Mode()&0o111 != 0 {
			return filepath.Join(d, name)
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	require.Skipf(t, require.Trackers, "no %s in $VIRTUAL_ENV, %s or $PATH (make venv installs requirements-trackers.txt)", name, venvDir)
	return ""
}

// TestRealMLflowServer: an export to a real MLflow server (mlflow server, SQLite, served
// artifacts), read back through its REST API: the scenarios' metrics and params, the time
// slices' steps, the parent's status and run.json as its artifact.
func TestRealMLflowServer(t *testing.T) {
	bin := trackerTool(t, "mlflow")
	tmp := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	logf, err := os.Create(filepath.Join(tmp, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "server", "--host", "127.0.0.1", "--port", fmt.Sprint(port), "--workers", "1",
		"--backend-store-uri", "sqlite:///"+filepath.Join(tmp, "db"), "--artifacts-destination", filepath.Join(tmp, "art"))
	cmd.Dir, cmd.Stdout, cmd.Stderr = tmp, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the server starts uvicorn: kill the group
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	began, ready := time.Now(), false
	for deadline := time.Now().Add(120 * time.Second); time.Now().Before(deadline) && !ready; {
		select {
		case err := <-exited:
			exited <- err
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("mlflow server exited: %v\n%s", err, log)
		case <-time.After(200 * time.Millisecond):
		}
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			ready = resp.StatusCode == http.StatusOK
		}
	}
	if !ready {
		log, _ := os.ReadFile(logf.Name())
		t.Fatalf("mlflow server not ready at %s after 120s:\n%s", base, log)
	}
	t.Logf("mlflow server ready in %v", time.Since(began).Round(100*time.Millisecond))

	dir, r := fixture(t)
	ctx := context.Background()
	got, err := ExportMLflow(ctx, From(r, Options{Dir: dir}), MLflowOptions{TrackingURI: base, Experiment: "real", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}

	call := func(method, path string, in, out any) {
		t.Helper()
		var body io.Reader
		if in != nil {
			b, _ := json.Marshal(in)
			body = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, body)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, data)
		}
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	var search struct {
		Runs []struct {
			Info struct {
				RunID  string `json:"run_id"`
				Status string `json:"status"`
			} `json:"info"`
			Data struct {
				Metrics []struct {
					Key   string  `json:"key"`
					Value float64 `json:"value"`
					Step  int     `json:"step"`
				} `json:"metrics"`
				Params []keyValue `json:"params"`
				Tags   []keyValue `json:"tags"`
			} `json:"data"`
		} `json:"runs"`
	}
	call("POST", "/api/2.0/mlflow/runs/search", map[string]any{"experiment_ids": []string{experimentID(t, got.Where)}, "max_results": 100}, &search)
	if len(search.Runs) != 1+len(r.Scenarios) {
		t.Fatalf("runs/search: %d runs, want 1 + %d", len(search.Runs), len(r.Scenarios))
	}
	sc := scenarioOf(t, r, "serving-mock/concurrency=4")
	found := false
	for _, run := range search.Runs {
		tags := map[string]string{}
		for _, kv := range run.Data.Tags {
			tags[kv.Key] = kv.Value
		}
		if run.Info.RunID == got.Parent.ID {
			if run.Info.Status != "FINISHED" || tags["inferbench.run_id"] != r.ID {
				t.Errorf("parent: status %s, inferbench.run_id %q; want FINISHED, %s", run.Info.Status, tags["inferbench.run_id"], r.ID)
			}
			continue
		}
		if tags["mlflow.parentRunId"] != got.Parent.ID {
			t.Errorf("run %s: parent %q, want %s", run.Info.RunID, tags["mlflow.parentRunId"], got.Parent.ID)
		}
		if tags["mlflow.runName"] != sc.ID() {
			continue
		}
		found = true
		metrics := map[string]float64{}
		for _, m := range run.Data.Metrics {
			metrics[m.Key] = m.Value
		}
		for name, want := range map[string]float64{"ttft_ms.p99": sc.Metrics["ttft_ms"].Summary.P99,
			"e2e_ms.p50": sc.Metrics["e2e_ms"].Summary.Median, "requests_per_s": *sc.Metrics["requests_per_s"].Value,
			"slices/ttft_ms.p99": 29} { // the last step's
			if metrics[name] != want {
				t.Errorf("%s: %s = %v, want %v", sc.ID(), name, metrics[name], want)
			}
		}
		params := map[string]string{}
		for _, kv := range run.Data.Params {
			params[kv.Key] = kv.Value
		}
		if params["concurrency"] != "4" || params["benchmark"] != "serving-mock" {
			t.Errorf("%s: params %v, want concurrency 4 and benchmark serving-mock", sc.ID(), params)
		}
		var hist struct {
			Metrics []struct {
				Value float64 `json:"value"`
				Step  int     `json:"step"`
			} `json:"metrics"`
		}
		call("GET", "/api/2.0/mlflow/metrics/get-history?run_id="+run.Info.RunID+"&metric_key=slices/ttft_ms.p99", nil, &hist)
		if len(hist.Metrics) != 2 {
			t.Errorf("slices/ttft_ms.p99 history: %+v, want 2 steps", hist.Metrics)
		}
	}
	if !found {
		t.Errorf("no run named %s on the server", sc.ID())
	}

	var list struct {
		Files []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	call("GET", "/api/2.0/mlflow/artifacts/list?run_id="+got.Parent.ID, nil, &list)
	var paths []string
	for _, f := range list.Files {
		paths = append(paths, f.Path)
	}
	if !strings.Contains(strings.Join(paths, " "), result.RunFile) {
		t.Errorf("parent's artifacts %v: no %s", paths, result.RunFile)
	}
	resp, err := http.Get(base + "/get-artifact?path=" + result.RunFile + "&run_uuid=" + got.Parent.ID)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want, _ := os.ReadFile(filepath.Join(dir, result.RunFile))
	if !bytes.Equal(data, want) {
		t.Errorf("run.json as the server has it: %d bytes (HTTP %d), want the run folder's %d", len(data), resp.StatusCode, len(want))
	}
}

// experimentID reads the id out of Exported.Where ("experiment "real" (id 1) at ...").
func experimentID(t *testing.T, where string) string {
	t.Helper()
	_, rest, ok := strings.Cut(where, "(id ")
	id, _, ok2 := strings.Cut(rest, ")")
	if !ok || !ok2 {
		t.Fatalf("no experiment id in %q", where)
	}
	return id
}

// TestWandbOffline: an export in W&B's offline mode writes a run per scenario under WANDB_DIR,
// grouped by the run id, whose record (the run's transaction log, read by testdata/readwandb.py:
// what `wandb sync` would send) holds the metrics as its summary, the params as its config and
// the time slices as history steps.
func TestWandbOffline(t *testing.T) {
	py := pyenv.Find(nil).Path
	if exec.Command(py, "-c", "import wandb").Run() != nil {
		py = trackerTool(t, "python")
		if out, err := exec.Command(py, "-c", "import wandb").CombinedOutput(); err != nil {
			require.Skipf(t, require.Trackers, "%s cannot import wandb: %s", py, out)
		}
	}
	tmp := t.TempDir()
	env := append(os.Environ(), "INFERBENCH_PYTHON="+py, "WANDB_MODE=offline", "WANDB_DIR="+tmp, "WANDB_SILENT=true",
		"WANDB_CONFIG_DIR="+filepath.Join(tmp, "config"), "WANDB_CACHE_DIR="+filepath.Join(tmp, "cache"),
		"WANDB_DATA_DIR="+filepath.Join(tmp, "data"))
	dir, r := fixture(t)
	r.Scenarios = r.Scenarios[1:3] // two scenarios, one with time slices: each W&B run takes a second or two
	var stderr bytes.Buffer
	got, err := ExportWandb(context.Background(), From(r, Options{Dir: dir}), WandbOptions{Project: "ib-test", Env: env, Dir: tmp, Stderr: &stderr})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if len(got.Runs) != len(r.Scenarios) {
		t.Fatalf("%d W&B runs reported, want %d:\n%s", len(got.Runs), len(r.Scenarios), stderr.String())
	}
	reader, _ := filepath.Abs("testdata/readwandb.py")
	for i, c := range got.Runs {
		sc := &r.Scenarios[i]
		if !strings.HasPrefix(c.Dir, filepath.Join(tmp, "wandb")) || c.Name != sc.ID() {
			t.Errorf("run %s in %s, want %s under WANDB_DIR %s", c.Name, c.Dir, sc.ID(), tmp)
		}
		logs, _ := filepath.Glob(filepath.Join(c.Dir, "run-*.wandb"))
		if len(logs) != 1 {
			t.Fatalf("%s: transaction logs %v, want one run-ID.wandb", c.Dir, logs)
		}
		out, err := exec.Command(py, reader, logs[0]).Output()
		if err != nil {
			t.Fatalf("%s %s: %v", reader, logs[0], err)
		}
		var rec struct {
			Config  map[string]any   `json:"config"`
			Summary map[string]any   `json:"summary"`
			History []map[string]any `json:"history"`
		}
		if err := json.Unmarshal(out, &rec); err != nil {
			t.Fatal(err)
		}
		lat := sc.Metrics["latency_ms"].Summary
		for name, want := range map[string]float64{"latency_ms.p99": lat.P99, "latency_ms.p50": lat.Median, "latency_ms.mean": lat.Mean} {
			if rec.Summary[name] != want {
				t.Errorf("%s: summary %s = %v, want %v", c.Name, name, rec.Summary[name], want)
			}
		}
		for k, want := range map[string]any{"benchmark": sc.Benchmark, "scenario": sc.Scenario, "inferbench.run_id": r.ID} {
			if rec.Config[k] != want {
				t.Errorf("%s: config %s = %v, want %v", c.Name, k, rec.Config[k], want)
			}
		}
		steps := 0
		for _, h := range rec.History {
			if _, ok := h["slices/ttft_ms.p99"]; ok {
				steps++
			}
		}
		if want := map[bool]int{true: 2, false: 0}[sc.ID() == "serving-mock/concurrency=4"]; steps != want {
			t.Errorf("%s: %d history steps with slices/ttft_ms.p99, want %d", c.Name, steps, want)
		}
	}
}

// TestWandbMissing: an interpreter without wandb gives an error that says what to install where.
func TestWandbMissing(t *testing.T) {
	py := pyenv.Fallback // Debian's, without wandb
	if _, err := os.Stat(py); err != nil {
		t.Skipf("no %s", py)
	}
	if exec.Command(py, "-c", "import wandb").Run() == nil {
		t.Skipf("%s has wandb", py)
	}
	_, err := ExportWandb(context.Background(), &Payload{RunID: "r"}, WandbOptions{Env: []string{"INFERBENCH_PYTHON=" + py}})
	if err == nil || !strings.Contains(err.Error(), "pip install wandb into "+py) {
		t.Errorf("error %v: want one saying pip install wandb into %s", err, py)
	}
}
