package result

import (
	"bytes"
	"crypto/rand"
	"encoding/base32"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/atomicfile"
	"github.com/inferbench/inferbench/internal/base/inert"
	"github.com/inferbench/inferbench/internal/base/readall"
)

// File names inside a run folder.
const (
	RunFile     = "run.json"
	summaryFile = "summary.csv"
	LogFile     = "run.log"
	LatestLink  = "latest"
)

// NewID returns a new run id: the time to the second, for reading and sorting, then 40 random
// bits, so that runs started in the same second in other processes or on other hosts get other
// ids (e.g. 20261122_143005-k3x9a2mq). The store never replaces a run of the same id.
func NewID(t time.Time) string {
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return t.Format("20060102_150405") + "-" + strings.ToLower(idEncoding.EncodeToString(b[:]))
}

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding) // Crockford's alphabet

// Save writes run.json and summary.csv into dir, atomically, and the per-model views of them
// that LLM benchmark scripts write: models/<model>.json and benchmark_summary.json (saveModels).
func Save(dir string, r *Run) error {
	// run.json is encoded straight into its file (a merged run's is hundreds of MB).
	if err := atomicfile.Write(filepath.Join(dir, RunFile), func(w io.Writer) error { return WriteJSON(w, r) }); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, RunFile), err)
	}
	var csvBuf bytes.Buffer
	if err := WriteCSV(&csvBuf, r); err != nil {
		return fmt.Errorf("encode %s: %w", summaryFile, err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, summaryFile), csvBuf.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, summaryFile), err)
	}
	return saveModels(dir, r)
}

// Load reads a run.json (or a run folder holding one) and checks its schema (see Decode). For a
// run that never finished, the scenarios of the folder's journal (JournalFile) that run.json
// lacks are added.
func Load(path string) (*Run, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, RunFile)
	}
	r, done, err := loadStream(path, path, false)
	if !done {
		var data []byte
		if data, err = readall.File(path, readall.RunLimit); err != nil {
			return nil, err
		}
		r, err = Decode(data, path)
	}
	if err != nil {
		return nil, err
	}
	// A run that never finished (killed, or still running) has the scenarios since its last
	// rewrite of run.json in its journal.
	if filepath.Base(path) == RunFile {
		if err := AddJournal(filepath.Dir(path), r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Decode reads a run.json's content; path (the file) prefixes its errors. A run whose schema is
// not Schema, or with a value CheckValues refuses (a negative time, an absurd count), is an error.
// A run that never finished (killed before its last write: no finished_at) is marked partial.
func Decode(data []byte, path string) (*Run, error) {
	var r Run
	if err := decodeRun(data, &r); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(data, se.Offset)
			return nil, fmt.Errorf("%s:%d:%d: corrupt run file: %v", path, line, col, err)
		}
		return nil, fmt.Errorf("%s: corrupt run file: %w", path, err)
	}
	return check(&r, path)
}

// inertNames escapes the control characters of r's benchmark and scenario names (inert.Text):
// a run.json or another tool's file from elsewhere cannot put an escape sequence on a terminal
// or in a text report through them.
func inertNames(r *Run) {
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		s.Benchmark, s.Scenario = inert.Text(s.Benchmark), inert.Text(s.Scenario)
	}
}

func lineCol(data []byte, off int64) (int, int) {
	line, col := 1, 1
	for i := int64(0); i < off && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// measured returns what the subject reported it ran with (the worker's setup info, then its
// description), else the parameter as asked; "auto" is a request, not a device, and is left out.
func measured(s *Scenario, k string) string {
	if setup, ok := s.Environment["setup"].(map[string]any); ok {
		if v, ok := setup[k]; ok && v != nil && fmt.Sprint(v) != "" {
			return fmt.Sprint(v)
		}
	}
	if v, ok := s.Environment[k]; ok && v != nil && fmt.Sprint(v) != "" {
		return fmt.Sprint(v)
	}
	if v, ok := s.Params[k]; ok && v != nil && fmt.Sprint(v) != "auto" {
		return fmt.Sprint(v)
	}
	return ""
}

// deviceType returns the kind of a device name: "cuda" for "cuda:0", "cpu", "mps", "tpu", ...
func deviceType(device string) string {
	t, _, _ := strings.Cut(device, ":")
	return strings.ToLower(strings.TrimSpace(t))
}

// csvHeader is the header of summary.csv.
var csvHeader = []string{
	"benchmark", "scenario", "model", "framework", "device", "device_type", "batch_size", "dtype",
	"input_shape", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "latency_mean_ms", "latency_std_ms",
	"latency_min_ms", "latency_max_ms", "throughput_ips", "memory_mb", "compilation_time_ms",
	"status", "timestamp", "git_commit",
}

// WriteCSV writes one row per scenario, in csvHeader's columns. Absent figures are empty cells.
func WriteCSV(w io.Writer, r *Run) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	commit, _ := EnvValue(r.Environment, "git", "commit").(string)
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		param := func(k string) string {
			if v, ok := s.Params[k]; ok && v != nil {
				return fmt.Sprint(v)
			}
			if v, ok := s.Environment[k]; ok && v != nil {
				return fmt.Sprint(v)
			}
			return ""
		}
		device := measured(s, "device")
		lat := s.Metrics["latency_ms"].Summary
		f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
		latCell := func(get func() float64) string {
			if lat == nil {
				return ""
			}
			return f(get())
		}
		value := func(name string) string {
			if v, ok := s.Metrics[name].Center(); ok {
				return f(v)
			}
			return ""
		}
		ts := ""
		if !s.StartedAt.IsZero() {
			ts = s.StartedAt.UTC().Format(time.RFC3339)
		}
		row := []string{
			s.Benchmark, s.Scenario, s.Model, param("framework"), device, deviceType(device),
			param("batch_size"), measured(s, "dtype"), measured(s, "input_shape"),
			latCell(func() float64 { return lat.Median }), latCell(func() float64 { return lat.P95 }),
			latCell(func() float64 { return lat.P99 }), latCell(func() float64 { return lat.Mean }),
			latCell(func() float64 { return lat.Std }), latCell(func() float64 { return lat.Min }),
			latCell(func() float64 { return lat.Max }),
			value("throughput_ips"), value("memory_mb"), value("compile_time_ms"),
			s.Status, ts, commit,
		}
		for i := range row {
			row[i] = inertCell(row[i])
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// inertCell returns a CSV cell that a spreadsheet reads as text, never as a formula: a text
// starting with =, +, -, @, a tab or a carriage return (=HYPERLINK(...) in a benchmark's name or
// a parameter, a formula injection) gets a leading single quote, as OWASP recommends and
// spreadsheets hide. A number (-3.5, +2, 1e-3) is kept as it is, so it stays a number.
func inertCell(s string) string {
	s = inert.Text(s) // control characters inside a cell too
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}

// EnvValue returns the value under keys in a nested map such as Run.Environment
// (EnvValue(env, "git", "commit")), or nil where a key is missing or a level is not a map.
func EnvValue(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}
