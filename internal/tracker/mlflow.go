package tracker

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/pyenv"
)

// MLflow's limits on one runs/log-batch call (docs: "Request Limits").
const (
	MaxBatchMetrics  = 1000
	MaxBatchParams   = 100
	MaxBatchTags     = 100
	MaxBatchEntities = 1000 // metrics, params and tags together
	// MaxParamValue is the longest param value MLflow keeps (6000 since MLflow 2.x); longer is cut.
	MaxParamValue = 6000
)

// DefaultExperiment is the MLflow experiment runs go to when neither --experiment nor
// MLFLOW_EXPERIMENT_NAME names one.
const DefaultExperiment = "inferbench"

// MLflowOptions say where ExportMLflow sends a run.
type MLflowOptions struct {
	TrackingURI string // the server ("" for $MLFLOW_TRACKING_URI)
	Experiment  string // "" for $MLFLOW_EXPERIMENT_NAME, else DefaultExperiment
	// Env is the environment, KEY=VALUE as os.Environ: MLFLOW_TRACKING_URI,
	// MLFLOW_EXPERIMENT_NAME, MLFLOW_TRACKING_TOKEN, MLFLOW_TRACKING_USERNAME and _PASSWORD,
	// MLFLOW_TRACKING_INSECURE_TLS, as MLflow's own clients read them.
	Env []string
	// Timeout bounds each request (default DefaultTimeout): a server that accepts the connection
	// and never answers costs the export at most this.
	Timeout time.Duration
}

// Created is one run a tracker created.
type Created struct {
	Name string // the inferbench run id, or the scenario's benchmark/scenario
	ID   string // the tracker's run id (MLflow), or the run's id (W&B)
	URL  string // where to see it ("" when unknown)
	Dir  string // W&B: the run's local folder
}

// Exported is what a tracker made of a run.
type Exported struct {
	Tracker  string    // "mlflow" or "wandb"
	Where    string    // MLflow: the experiment, its id and the server; W&B: the project
	Parent   *Created  // MLflow: the run of the inferbench run (W&B has none: a group)
	Runs     []Created // a run per scenario
	Warnings []string  // what was not sent, and why
}

// Write prints what was created, a line each, and the warnings.
func (e *Exported) Write(w io.Writer) {
	fmt.Fprintf(w, "%s: %s\n", e.Tracker, e.Where)
	line := func(kind string, c Created) {
		fmt.Fprintf(w, "  %s %s: %s", kind, c.Name, c.ID)
		if c.URL != "" {
			fmt.Fprintf(w, " %s", c.URL)
		}
		if c.Dir != "" {
			fmt.Fprintf(w, " (%s)", c.Dir)
		}
		fmt.Fprintln(w)
	}
	if e.Parent != nil {
		line("run", *e.Parent)
	}
	for _, c := range e.Runs {
		line("scenario", c)
	}
	for _, s := range e.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", s)
	}
}

// ExportMLflow sends the payload to an MLflow tracking server: one run for the inferbench run
// (its tags, its files as artifacts) and under it a run per scenario (tag mlflow.parentRunId;
// params, metrics, the time slices as steps). A run that failed ends FAILED, an interrupted
// one KILLED.
func ExportMLflow(ctx context.Context, p *Payload, o MLflowOptions) (*Exported, error) {
	c, err := newMLflow(o)
	if err != nil {
		return nil, err
	}
	exp := o.Experiment
	if exp == "" {
		exp, _ = pyenv.Lookup(o.Env, "MLFLOW_EXPERIMENT_NAME")
	}
	if exp == "" {
		exp = DefaultExperiment
	}
	expID, err := c.experiment(ctx, exp)
	if err != nil {
		return nil, err
	}
	out := &Exported{Tracker: "mlflow", Where: fmt.Sprintf("experiment %q (id %s) at %s", exp, expID, c.shown), Warnings: p.Warnings}
	start := p.StartedAt
	if start.IsZero() {
		start = time.Now()
	}
	end := p.FinishedAt
	if end.IsZero() {
		end = start
	}

	// The system tags go with runs/create; the others through runs/log-batch, within its limits.
	sys := map[string]string{"mlflow.runName": p.RunID, "mlflow.source.name": "inferbench", "mlflow.source.type": "LOCAL"}
	if v := p.Tags["git.commit"]; v != "" {
		sys["mlflow.source.git.commit"] = v
	}
	if v := p.Tags["git.branch"]; v != "" {
		sys["mlflow.source.git.branch"] = v
	}
	parent, err := c.createRun(ctx, expID, p.RunID, start, sys)
	if err != nil {
		return nil, err
	}
	out.Parent = &Created{Name: p.RunID, ID: parent.RunID, URL: c.runURL(expID, parent.RunID)}
	// A failure after a run was created ends it FAILED, so that it does not stay RUNNING.
	fail := func(err error, runIDs ...string) error {
		for _, id := range runIDs {
			_ = c.updateRun(context.WithoutCancel(ctx), id, "FAILED", time.Now())
		}
		return err
	}
	if err := c.logBatches(ctx, parent.RunID, batch{tags: validKV(p.Tags)}); err != nil {
		return out, fail(err, parent.RunID)
	}

	for _, s := range p.Scenarios {
		st, en := s.StartedAt, s.StartedAt.Add(time.Duration(s.DurationS*float64(time.Second)))
		if st.IsZero() {
			st, en = start, end
		}
		child, err := c.createRun(ctx, expID, s.ID, st, map[string]string{
			"mlflow.runName": s.ID, "mlflow.parentRunId": parent.RunID, "mlflow.source.name": "inferbench",
		})
		if err != nil {
			return out, fail(err, parent.RunID)
		}
		b := batchOf(s, st)
		b.tags = validKV(map[string]string{"inferbench.run_id": p.RunID, "inferbench.scenario": s.ID,
			"inferbench.status": s.Status, "inferbench.tags": strings.Join(s.Tags, ",")})
		if err := c.logBatches(ctx, child.RunID, b); err != nil {
			return out, fail(err, child.RunID, parent.RunID)
		}
		status := "FINISHED"
		if s.Status == "failed" {
			status = "FAILED"
		}
		if err := c.updateRun(ctx, child.RunID, status, en); err != nil {
			return out, fail(err, parent.RunID)
		}
		out.Runs = append(out.Runs, Created{Name: s.ID, ID: child.RunID, URL: c.runURL(expID, child.RunID)})
	}
	w, err := c.uploadArtifacts(ctx, parent, p.Artifacts)
	if err != nil {
		return out, fail(err, parent.RunID)
	}
	if w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	status := map[string]string{"failed": "FAILED", "partial": "KILLED"}[p.Status]
	if status == "" {
		status = "FINISHED"
	}
	return out, c.updateRun(ctx, parent.RunID, status, end)
}

// validKV returns the entries of m with a name MLflow takes and a value, sorted, values cut to
// MaxParamValue.
func validKV(m map[string]string) []keyValue {
	var out []keyValue
	for _, kv := range sortedKV(m) {
		if !ValidName(kv.Key) || kv.Value == "" {
			continue
		}
		if len(kv.Value) > MaxParamValue {
			kv.Value = kv.Value[:MaxParamValue]
		}
		out = append(out, kv)
	}
	return out
}

// mlflowClient calls one tracking server's REST API.
type mlflowClient struct {
	base  string // the tracking URI, without a trailing slash
	shown string // base with a password in it masked, for messages
	http  *http.Client
	token string
	user  string
	pass  string
	// timeout is the deadline of each request, named in the error when it passes
	timeout time.Duration
}

func newMLflow(o MLflowOptions) (*mlflowClient, error) {
	uri := o.TrackingURI
	if uri == "" {
		uri, _ = pyenv.Lookup(o.Env, "MLFLOW_TRACKING_URI")
	}
	if uri == "" {
		return nil, errors.New("mlflow: no tracking server: give --tracking-uri or set MLFLOW_TRACKING_URI (e.g. http://127.0.0.1:5000)")
	}
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("mlflow: tracking URI %q: want http://HOST:PORT or https://... (a local mlruns folder or databricks is not supported)", uri)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if v, _ := pyenv.Lookup(o.Env, "MLFLOW_TRACKING_INSECURE_TLS"); strings.EqualFold(v, "true") {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for, as MLflow's own client does
	}
	c := &mlflowClient{base: strings.TrimRight(uri, "/"), shown: strings.TrimRight(u.Redacted(), "/"),
		http: &http.Client{Timeout: timeout, Transport: tr}, timeout: timeout}
	c.token, _ = pyenv.Lookup(o.Env, "MLFLOW_TRACKING_TOKEN")
	c.user, _ = pyenv.Lookup(o.Env, "MLFLOW_TRACKING_USERNAME")
	c.pass, _ = pyenv.Lookup(o.Env, "MLFLOW_TRACKING_PASSWORD")
	return c, nil
}

func (c *mlflowClient) runURL(expID, runID string) string {
	return fmt.Sprintf("%s/#/experiments/%s/runs/%s", c.shown, expID, runID)
}

// apiError is a tracking server's answer other than 200.
type apiError struct {
	URL    string
	Status int
	Code   string // MLflow's error_code, e.g. RESOURCE_DOES_NOT_EXIST
	Body   string // bounded
}

func (e *apiError) Error() string {
	return fmt.Sprintf("mlflow: %s: HTTP %d: %s", e.URL, e.Status, e.Body)
}

// maxErrorBody bounds the part of an error's body quoted in the message.
const maxErrorBody = 512

// do sends a request of method to the path and decodes a JSON answer into out (when not nil).
func (c *mlflowClient) do(ctx context.Context, method, path string, body io.Reader, contentType string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	u := c.shown + path
	if err != nil {
		return fmt.Errorf("mlflow: %s: %w", u, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	switch {
	case c.token != "":
		req.Header.Set("Authorization", "Bearer "+c.token)
	case c.user != "" || c.pass != "":
		req.SetBasicAuth(c.user, c.pass)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if timedOut(err) && ctx.Err() == nil {
			return fmt.Errorf("mlflow: %s %s: no answer within %v (%s lengthens it): %w", method, u, c.timeout, TimeoutEnv, err)
		}
		return fmt.Errorf("mlflow: %s %s: %w", method, u, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		if timedOut(err) && ctx.Err() == nil {
			return fmt.Errorf("mlflow: %s %s: no whole answer within %v (%s lengthens it): %w", method, u, c.timeout, TimeoutEnv, err)
		}
		return fmt.Errorf("mlflow: %s %s: %w", method, u, err)
	}
	if resp.StatusCode != http.StatusOK {
		e := &apiError{URL: method + " " + u, Status: resp.StatusCode, Body: strings.TrimSpace(string(data))}
		if len(e.Body) > maxErrorBody {
			e.Body = e.Body[:maxErrorBody] + "..."
		}
		var m struct {
			Code string `json:"error_code"`
		}
		if json.Unmarshal(data, &m) == nil {
			e.Code = m.Code
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("mlflow: %s %s: the answer is not MLflow's JSON: %w", method, u, err)
	}
	return nil
}

func (c *mlflowClient) post(ctx context.Context, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, "/api/2.0/mlflow/"+path, bytes.NewReader(b), "application/json", out)
}

// experiment returns the id of the experiment named name, creating it when there is none.
func (c *mlflowClient) experiment(ctx context.Context, name string) (string, error) {
	var got struct {
		Experiment struct {
			ID string `json:"experiment_id"`
		} `json:"experiment"`
	}
	get := func() error {
		return c.do(ctx, http.MethodGet, "/api/2.0/mlflow/experiments/get-by-name?experiment_name="+url.QueryEscape(name), nil, "", &got)
	}
	err := get()
	var ae *apiError
	if errors.As(err, &ae) && ae.Code == "RESOURCE_DOES_NOT_EXIST" {
		var made struct {
			ID string `json:"experiment_id"`
		}
		err = c.post(ctx, "experiments/create", map[string]any{"name": name}, &made)
		if errors.As(err, &ae) && ae.Code == "RESOURCE_ALREADY_EXISTS" {
			err = get() // made meanwhile by another client
		} else if err == nil {
			return made.ID, nil
		}
	}
	if err != nil {
		return "", err
	}
	return got.Experiment.ID, nil
}

// runInfo is what runs/create answers of the run made.
type runInfo struct {
	RunID       string `json:"run_id"`
	ArtifactURI string `json:"artifact_uri"`
}

type keyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func (c *mlflowClient) createRun(ctx context.Context, expID, name string, start time.Time, tags map[string]string) (runInfo, error) {
	var out struct {
		Run struct {
			Info runInfo `json:"info"`
		} `json:"run"`
	}
	err := c.post(ctx, "runs/create", map[string]any{"experiment_id": expID, "run_name": name,
		"start_time": start.UnixMilli(), "tags": sortedKV(tags)}, &out)
	if err == nil && out.Run.Info.RunID == "" {
		err = fmt.Errorf("mlflow: %s/api/2.0/mlflow/runs/create: the answer has no run id", c.shown)
	}
	return out.Run.Info, err
}

func (c *mlflowClient) updateRun(ctx context.Context, runID, status string, end time.Time) error {
	return c.post(ctx, "runs/update", map[string]any{"run_id": runID, "status": status, "end_time": end.UnixMilli()}, nil)
}

// mlflowMetric is one point of a metric in runs/log-batch.
type mlflowMetric struct {
	Key       string  `json:"key"`
	Value     float64 `json:"value"`
	Timestamp int64   `json:"timestamp"`
	Step      int     `json:"step"`
}

// batch is everything logged to one run.
type batch struct {
	metrics []mlflowMetric
	params  []keyValue
	tags    []keyValue
}

// batchOf returns what is logged to a scenario's run: its params, its metrics at step 0 and
// its time slices as steps (timestamped at the slice's start after the run's).
func batchOf(s Scenario, start time.Time) batch {
	b := batch{params: validKV(s.Params)}
	ts := start.UnixMilli()
	for _, k := range slices.Sorted(maps.Keys(s.Metrics)) {
		b.metrics = append(b.metrics, mlflowMetric{Key: k, Value: s.Metrics[k], Timestamp: ts})
	}
	for _, st := range s.Steps {
		at := start.Add(time.Duration(st.StartS * float64(time.Second))).UnixMilli()
		for _, k := range slices.Sorted(maps.Keys(st.Metrics)) {
			b.metrics = append(b.metrics, mlflowMetric{Key: k, Value: st.Metrics[k], Timestamp: at, Step: st.Step})
		}
	}
	return b
}

// logBatches sends b in calls within log-batch's limits.
func (c *mlflowClient) logBatches(ctx context.Context, runID string, b batch) error {
	for len(b.tags) > 0 || len(b.params) > 0 || len(b.metrics) > 0 {
		nt := min(len(b.tags), MaxBatchTags)
		np := min(len(b.params), MaxBatchParams, MaxBatchEntities-nt)
		nm := min(len(b.metrics), MaxBatchMetrics, MaxBatchEntities-nt-np)
		req := map[string]any{"run_id": runID}
		if nt > 0 {
			req["tags"] = b.tags[:nt]
		}
		if np > 0 {
			req["params"] = b.params[:np]
		}
		if nm > 0 {
			req["metrics"] = b.metrics[:nm]
		}
		if err := c.post(ctx, "runs/log-batch", req, nil); err != nil {
			return err
		}
		b.tags, b.params, b.metrics = b.tags[nt:], b.params[np:], b.metrics[nm:]
	}
	return nil
}

// uploadArtifacts sends the files to the run's artifact store: through the server
// (mlflow-artifacts:), or copied into a folder (file:). Another store is a warning: the server
// gives the client the store's own credentials, which inferbench does not have.
func (c *mlflowClient) uploadArtifacts(ctx context.Context, run runInfo, files []Artifact) (warning string, err error) {
	if len(files) == 0 {
		return "", nil
	}
	u, perr := url.Parse(run.ArtifactURI)
	switch {
	case perr == nil && u.Scheme == "mlflow-artifacts":
		dir := strings.Trim(u.Path, "/")
		for _, f := range files {
			if err := c.putArtifact(ctx, dir+"/"+f.Name, f.Path); err != nil {
				return "", err
			}
		}
		return "", nil
	case perr == nil && (u.Scheme == "file" || (u.Scheme == "" && filepath.IsAbs(run.ArtifactURI))):
		dir := u.Path
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("mlflow: artifacts: %w", err)
		}
		for _, f := range files {
			if err := copyFile(f.Path, filepath.Join(dir, f.Name)); err != nil {
				return "", fmt.Errorf("mlflow: artifacts: %w", err)
			}
		}
		return "", nil
	}
	return fmt.Sprintf("artifacts not uploaded: the run's artifact store is %s, which only the server's own storage client writes (start the server with --serve-artifacts, the default since MLflow 2.0, to upload through it)", run.ArtifactURI), nil
}

func (c *mlflowClient) putArtifact(ctx context.Context, path, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("mlflow: artifact: %w", err)
	}
	defer f.Close()
	var esc []string
	for _, seg := range strings.Split(path, "/") {
		esc = append(esc, url.PathEscape(seg))
	}
	return c.do(ctx, http.MethodPut, "/api/2.0/mlflow-artifacts/artifacts/"+strings.Join(esc, "/"), f, "application/octet-stream", nil)
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}

func sortedKV(m map[string]string) []keyValue {
	out := make([]keyValue, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, keyValue{Key: k, Value: m[k]})
	}
	return out
}
