package result

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/inferbench/inferbench/stats"
)

// WriteGoBench writes a run in the Go benchmark format, one line per raw sample, so that
// benchstat compares two runs directly:
//
//	inferbench export OLD --format gobench > old.txt
//	inferbench export NEW --format gobench > new.txt
//	benchstat old.txt new.txt
//
// latency_ms is written as ns/op (benchstat's sec/op); every other metric keeps its name as the
// unit ("12.5 ttft_ms"). Metrics without samples are written once, with their value. The run id
// and commit are a comment line, not configuration: two exports have the same configuration, so
// benchstat puts them in one table.
func WriteGoBench(w io.Writer, r *Run) error {
	bw := bufio.NewWriter(w)
	// Note: the run id and commit were configuration lines ("inferbench-run: ID", "commit: C").
	// benchstat splits its tables by file-level configuration, so two exports, whose ids always
	// differ, printed two tables and compared nothing. They are a comment now: the format ignores
	// lines that are neither configuration nor results.
	fmt.Fprintf(bw, "# inferbench run %s", r.ID)
	if c, ok := EnvValue(r.Environment, "git", "commit").(string); ok && c != "" {
		fmt.Fprintf(bw, " at commit %s", c)
	}
	fmt.Fprintln(bw)
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if s.Status != StatusOK {
			continue
		}
		name := goBenchName(s)
		metrics := slices.Sorted(maps.Keys(s.Metrics))
		for _, m := range metrics {
			met := s.Metrics[m]
			unit, scale := m, 1.0
			switch m {
			case "latency_ms":
				unit, scale = "ns/op", 1e6
			case "memory_bytes_per_op":
				unit = "B/op"
			case "allocs_per_op":
				unit = "allocs/op"
			}
			xs := met.Samples
			if len(xs) == 0 {
				if v, ok := met.Center(); ok {
					xs = []float64{v}
				}
			}
			for _, x := range xs {
				fmt.Fprintf(bw, "%s\t1\t%s %s\n", name, fmtFloat(x*scale), unit)
			}
		}
	}
	return bw.Flush()
}

var goBenchUnsafe = regexp.MustCompile(`\s+`)

// goBenchName is a scenario's name in the Go benchmark format: "Benchmark" + benchmark +
// "/" + scenario, without blanks.
func goBenchName(s *Scenario) string {
	b := goBenchUnsafe.ReplaceAllString(s.Benchmark, "_")
	if b != "" {
		b = strings.ToUpper(b[:1]) + b[1:]
	}
	name := "Benchmark" + b
	if s.Scenario != "" && s.Scenario != "default" {
		name += "/" + goBenchUnsafe.ReplaceAllString(s.Scenario, "_")
	}
	return name
}

func fmtFloat(v float64) string { return fmt.Sprintf("%.10g", v) }

// readGoBench reads `go test -bench` output (or anything in the Go benchmark format) into a run:
// each benchmark is a scenario of the benchmark named by its first name element
// (BenchmarkTokenize/len=64-8 → benchmark "Tokenize", scenario "len=64"), each line a sample.
// sec/op becomes latency_ms; B/op memory_bytes_per_op; allocs/op allocs_per_op; other units keep
// their name.
func readGoBench(rd io.Reader, name string, id string, at time.Time) (*Run, error) {
	br := benchfmt.NewReader(rd, name)
	type key struct{ bench, sc string }
	scen := map[key]map[string][]float64{}
	var order []key
	env := map[string]any{}
	for br.Scan() {
		switch rec := br.Result(); rec := rec.(type) {
		case *benchfmt.SyntaxError:
			return nil, rec
		case *benchfmt.Result:
			base, parts := rec.Name.Parts()
			bench := strings.TrimPrefix(string(base), "Benchmark")
			var sub []string
			for _, p := range parts {
				if bytes.HasPrefix(p, []byte("-")) { // -GOMAXPROCS
					continue
				}
				sub = append(sub, string(bytes.TrimPrefix(p, []byte("/"))))
			}
			sc := strings.Join(sub, "/")
			if sc == "" {
				sc = "default"
			}
			k := key{bench, sc}
			if scen[k] == nil {
				scen[k] = map[string][]float64{}
				order = append(order, k)
			}
			for _, v := range rec.Values {
				metric, x := goUnit(v.Unit, v.Value)
				scen[k][metric] = append(scen[k][metric], x)
			}
			for _, c := range rec.Config {
				if c.File {
					env[c.Key] = string(c.Value)
				}
			}
		}
	}
	if err := br.Err(); err != nil {
		return nil, err
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%s: no benchmark results (is this `go test -bench` output?)", name)
	}
	r := &Run{Schema: Schema, ID: id, StartedAt: at, FinishedAt: at, Environment: env, Config: Config{Args: []string{"import", name}}}
	if c, ok := env["commit"].(string); ok {
		r.Environment["git"] = map[string]any{"commit": c}
	}
	for _, k := range order {
		ms := map[string]Metric{}
		for m, xs := range scen[k] {
			if err := checkSamples(m, xs); err != nil {
				return nil, fmt.Errorf("%s: Benchmark%s/%s: %w", name, k.bench, k.sc, err)
			}
			ms[m] = SampleMetric(m, xs)
		}
		n := len(scen[k]["latency_ms"])
		r.Scenarios = append(r.Scenarios, Scenario{Benchmark: k.bench, Scenario: k.sc, Subject: "gobench", Status: StatusOK, StartedAt: at, Iterations: Iterations{Measured: n}, Metrics: ms})
	}
	r.Tally()
	return r, nil
}

func goUnit(unit string, v float64) (string, float64) {
	switch unit {
	case "sec/op":
		return "latency_ms", v * 1e3
	case "B/op":
		return "memory_bytes_per_op", v
	case "allocs/op":
		return "allocs_per_op", v
	case "B/s":
		return "bytes_per_s", v
	}
	return strings.NewReplacer("/", "_per_", " ", "_").Replace(unit), v
}

// checkSamples applies CheckValue to every sample.
func checkSamples(name string, xs []float64) error {
	for i, x := range xs {
		if err := CheckValue(name, x); err != nil {
			return fmt.Errorf("sample %d: %w", i+1, err)
		}
	}
	return nil
}

// SampleMetric builds a metric from raw samples: its summary, and the samples kept.
func SampleMetric(name string, xs []float64) Metric {
	m := NewMetric(name)
	if len(xs) == 1 {
		v := xs[0]
		m.Value = &v
		return m
	}
	if sum, err := stats.Summarize(xs); err == nil {
		m.Summary = &sum
		m.Samples = xs
	}
	return m
}
