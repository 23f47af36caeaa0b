// Package mlflowtest is a strict fake of the MLflow tracking server's REST API, for tests: the
// endpoints inferbench's export calls, each decoding its request with unknown fields refused,
// checking required fields and runs/log-batch's limits as MLflow documents them, and recording
// what was logged.
package mlflowtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Run is what the server holds of one run.
type Run struct {
	ID, Experiment, Name string
	Status               string
	StartTime, EndTime   int64
	Tags                 map[string]string
	Params               map[string]string
	Metrics              map[string][]Point // by key, in the order logged
	Artifacts            map[string][]byte  // by path below the run's artifact root
}

// Point is one logged value of a metric.
type Point struct {
	Value     float64
	Timestamp int64
	Step      int
}

// Server is the fake tracking server.
type Server struct {
	URL string
	// Fail makes every request whose path ends with it answer 500.
	Fail string
	// ArtifactURI is the artifact root runs are given: "mlflow-artifacts" (the default),
	// "file:DIR" or any other URI, returned as it is with the run id appended.
	ArtifactURI string

	mu          sync.Mutex
	experiments map[string]string // name -> id
	runs        map[string]*Run
	order       []string
	batches     int
}

// Start starts a server, closed at the end of the test.
func Start(t testing.TB) *Server {
	s := &Server{experiments: map[string]string{}, runs: map[string]*Run{}}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

// run is the run a request names by its run_id, or MLflow's error for a missing or unknown one.
func (s *Server) run(id *string) (*Run, *apiErr) {
	if id == nil {
		return nil, fail(400, "INVALID_PARAMETER_VALUE", "missing run_id")
	}
	run, ok := s.runs[*id]
	if !ok {
		return nil, fail(404, "RESOURCE_DOES_NOT_EXIST", "no run %s", *id)
	}
	return run, nil
}

// Runs returns the runs in the order they were created.
func (s *Server) Runs() []*Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Run, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.runs[id])
	}
	return out
}

// Batches returns how many runs/log-batch calls were accepted.
func (s *Server) Batches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.batches
}

// Experiment returns the id of the experiment named name ("" for none).
func (s *Server) Experiment(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.experiments[name]
}

type apiErr struct {
	status int
	code   string
	msg    string
}

func fail(status int, code, format string, args ...any) *apiErr {
	return &apiErr{status, code, fmt.Sprintf(format, args...)}
}

// ServeHTTP answers MLflow's REST API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.Fail != "" && strings.HasSuffix(r.URL.Path, s.Fail) {
		http.Error(w, `{"error_code":"INTERNAL_ERROR","message":"the fake fails as asked"}`, http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out, e := s.serve(r)
	w.Header().Set("Content-Type", "application/json")
	if e != nil {
		w.WriteHeader(e.status)
		json.NewEncoder(w).Encode(map[string]string{"error_code": e.code, "message": e.msg})
		return
	}
	json.NewEncoder(w).Encode(out)
}

func decode(r *http.Request, v any) *apiErr {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fail(400, "INVALID_PARAMETER_VALUE", "Content-Type %q, want application/json", ct)
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fail(400, "INVALID_PARAMETER_VALUE", "%s: %v", r.URL.Path, err)
	}
	return nil
}

type kv struct {
	Key   *string `json:"key"`
	Value *string `json:"value"`
}

// serve answers one request: an artifact's upload, or a call of an endpoint of endpoints.
func (s *Server) serve(r *http.Request) (any, *apiErr) {
	const api = "/api/2.0/mlflow/"
	if path, ok := strings.CutPrefix(r.URL.Path, "/api/2.0/mlflow-artifacts/artifacts/"); ok {
		return s.putArtifact(r, path)
	}
	endpoint, ok := strings.CutPrefix(r.URL.Path, api)
	if !ok {
		return nil, fail(404, "ENDPOINT_NOT_FOUND", "%s", r.URL.Path)
	}
	want := http.MethodPost
	if endpoint == "experiments/get-by-name" {
		want = http.MethodGet
	}
	if r.Method != want {
		return nil, fail(405, "BAD_REQUEST", "%s %s: want %s", r.Method, r.URL.Path, want)
	}
	if h, ok := endpoints[endpoint]; ok {
		return h(s, r)
	}
	return nil, fail(404, "ENDPOINT_NOT_FOUND", "%s", r.URL.Path)
}

// endpoints are the handlers of the REST API's endpoints the fake knows, by path below
// /api/2.0/mlflow/.
var endpoints = map[string]func(s *Server, r *http.Request) (any, *apiErr){
	"experiments/get-by-name": (*Server).getExperiment,
	"experiments/create":      (*Server).createExperiment,
	"runs/create":             (*Server).createRun,
	"runs/log-batch":          (*Server).logBatch,
	"runs/update":             (*Server).updateRun,
}

// putArtifact stores the body of a PUT as the artifact at path of the run whose artifact root
// it lies under.
func (s *Server) putArtifact(r *http.Request, path string) (any, *apiErr) {
	if r.Method != http.MethodPut {
		return nil, fail(405, "BAD_REQUEST", "%s %s", r.Method, r.URL.Path)
	}
	for _, run := range s.runs {
		root := fmt.Sprintf("%s/%s/artifacts/", run.Experiment, run.ID)
		if rel, ok := strings.CutPrefix(path, root); ok {
			b, _ := io.ReadAll(r.Body)
			run.Artifacts[rel] = b
			return map[string]any{}, nil
		}
	}
	return nil, fail(404, "RESOURCE_DOES_NOT_EXIST", "no run's artifacts at %s", path)
}

// getExperiment answers experiments/get-by-name: the experiment of a name.
func (s *Server) getExperiment(r *http.Request) (any, *apiErr) {
	name := r.URL.Query().Get("experiment_name")
	if name == "" {
		return nil, fail(400, "INVALID_PARAMETER_VALUE", "missing experiment_name")
	}
	id, ok := s.experiments[name]
	if !ok {
		return nil, fail(404, "RESOURCE_DOES_NOT_EXIST", "no experiment %q", name)
	}
	return map[string]any{"experiment": map[string]any{"experiment_id": id, "name": name}}, nil
}

// createExperiment answers experiments/create: a new experiment, numbered in order.
func (s *Server) createExperiment(r *http.Request) (any, *apiErr) {
	var in struct {
		Name *string `json:"name"`
	}
	if e := decode(r, &in); e != nil {
		return nil, e
	}
	if in.Name == nil || *in.Name == "" {
		return nil, fail(400, "INVALID_PARAMETER_VALUE", "missing name")
	}
	if _, ok := s.experiments[*in.Name]; ok {
		return nil, fail(400, "RESOURCE_ALREADY_EXISTS", "experiment %q exists", *in.Name)
	}
	id := fmt.Sprint(len(s.experiments) + 1)
	s.experiments[*in.Name] = id
	return map[string]any{"experiment_id": id}, nil
}

// createRun answers runs/create: a new RUNNING run of a known experiment, with its tags.
func (s *Server) createRun(r *http.Request) (any, *apiErr) {
	var in struct {
		ExperimentID *string `json:"experiment_id"`
		RunName      string  `json:"run_name"`
		StartTime    *int64  `json:"start_time"`
		Tags         []kv    `json:"tags"`
	}
	if e := decode(r, &in); e != nil {
		return nil, e
	}
	if in.ExperimentID == nil || in.StartTime == nil {
		return nil, fail(400, "INVALID_PARAMETER_VALUE", "runs/create needs experiment_id and start_time")
	}
	known := false
	for _, id := range s.experiments {
		known = known || id == *in.ExperimentID
	}
	if !known {
		return nil, fail(404, "RESOURCE_DOES_NOT_EXIST", "no experiment %s", *in.ExperimentID)
	}
	id := fmt.Sprintf("run%02d", len(s.runs)+1)
	run := &Run{ID: id, Experiment: *in.ExperimentID, Name: in.RunName, Status: "RUNNING", StartTime: *in.StartTime,
		Tags: map[string]string{}, Params: map[string]string{}, Metrics: map[string][]Point{}, Artifacts: map[string][]byte{}}
	for _, t := range in.Tags {
		if t.Key == nil || t.Value == nil {
			return nil, fail(400, "INVALID_PARAMETER_VALUE", "a tag needs key and value")
		}
		run.Tags[*t.Key] = *t.Value
	}
	s.runs[id] = run
	s.order = append(s.order, id)
	uri := "mlflow-artifacts:/" + run.Experiment + "/" + id + "/artifacts"
	if s.ArtifactURI != "" && s.ArtifactURI != "mlflow-artifacts" {
		uri = s.ArtifactURI + "/" + id
	}
	return map[string]any{"run": map[string]any{"info": map[string]any{"run_id": id, "run_uuid": id,
		"experiment_id": run.Experiment, "status": run.Status, "artifact_uri": uri}}}, nil
}

// logBatch answers runs/log-batch: it checks the whole batch against MLflow's limits and
// rules before it logs any of it.
func (s *Server) logBatch(r *http.Request) (any, *apiErr) {
	var in struct {
		RunID   *string `json:"run_id"`
		Metrics []struct {
			Key       *string  `json:"key"`
			Value     *float64 `json:"value"`
			Timestamp *int64   `json:"timestamp"`
			Step      int      `json:"step"`
		} `json:"metrics"`
		Params []kv `json:"params"`
		Tags   []kv `json:"tags"`
	}
	if e := decode(r, &in); e != nil {
		return nil, e
	}
	run, e := s.run(in.RunID)
	if e != nil {
		return nil, e
	}
	if run.Status != "RUNNING" {
		return nil, fail(400, "INVALID_STATE", "run %s is %s", run.ID, run.Status)
	}
	if len(in.Metrics) > 1000 || len(in.Params) > 100 || len(in.Tags) > 100 || len(in.Metrics)+len(in.Params)+len(in.Tags) > 1000 {
		return nil, fail(400, "INVALID_PARAMETER_VALUE", "A batch logging request can contain at most 1000 metrics, 100 params and 100 tags, 1000 in all: got %d, %d, %d",
			len(in.Metrics), len(in.Params), len(in.Tags))
	}
	for _, m := range in.Metrics {
		if m.Key == nil || m.Value == nil || m.Timestamp == nil {
			return nil, fail(400, "INVALID_PARAMETER_VALUE", "a metric needs key, value and timestamp")
		}
		if !validName(*m.Key) {
			return nil, fail(400, "INVALID_PARAMETER_VALUE", "invalid metric name %q", *m.Key)
		}
	}
	for _, p := range in.Params {
		if p.Key == nil || p.Value == nil {
			return nil, fail(400, "INVALID_PARAMETER_VALUE", "a param needs key and value")
		}
		if old, ok := run.Params[*p.Key]; ok && old != *p.Value {
			return nil, fail(400, "INVALID_PARAMETER_VALUE", "Changing param values is not allowed: %s", *p.Key)
		}
	}
	for _, t := range in.Tags {
		if t.Key == nil || t.Value == nil {
			return nil, fail(400, "INVALID_PARAMETER_VALUE", "a tag needs key and value")
		}
	}
	for _, m := range in.Metrics {
		run.Metrics[*m.Key] = append(run.Metrics[*m.Key], Point{*m.Value, *m.Timestamp, m.Step})
	}
	for _, p := range in.Params {
		run.Params[*p.Key] = *p.Value
	}
	for _, t := range in.Tags {
		run.Tags[*t.Key] = *t.Value
	}
	s.batches++
	return map[string]any{}, nil
}

// updateRun answers runs/update: a run's status and end time.
func (s *Server) updateRun(r *http.Request) (any, *apiErr) {
	var in struct {
		RunID   *string `json:"run_id"`
		Status  string  `json:"status"`
		EndTime int64   `json:"end_time"`
	}
	if e := decode(r, &in); e != nil {
		return nil, e
	}
	run, e := s.run(in.RunID)
	if e != nil {
		return nil, e
	}
	switch in.Status {
	case "RUNNING", "SCHEDULED", "FINISHED", "FAILED", "KILLED":
	default:
		return nil, fail(400, "INVALID_PARAMETER_VALUE", "status %q", in.Status)
	}
	run.Status, run.EndTime = in.Status, in.EndTime
	return map[string]any{"run_info": map[string]any{"run_id": run.ID, "status": run.Status}}, nil
}

// validName is MLflow's rule for a metric's name: letters, digits, _ - . / and space.
func validName(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_-./ ", c)) {
			return false
		}
	}
	return s != ""
}
