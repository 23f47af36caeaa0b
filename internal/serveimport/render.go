package serveimport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/inferbench/inferbench/result"
)

// ParseTools checks the tools --report-as names (a list or comma lists).
func ParseTools(flag []string) ([]string, error) {
	var out []string
	for _, f := range flag {
		for _, t := range strings.Split(f, ",") {
			t = strings.TrimSpace(t)
			if !slices.Contains(ReportAs, t) {
				return nil, fmt.Errorf("--report-as %q: want %s", t, strings.Join(ReportAs, ", "))
			}
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// LogFunc opens the request log of a scenario of a run of inferbench's own (nil, nil when it has
// none).
type LogFunc func(sc *result.Scenario) (*Calc, error)

// ErrNoRequests is the error of a scenario whose figures cannot be computed by another tool's
// definitions: neither an import with its requests' timestamps nor a request log.
var ErrNoRequests = errors.New("no request's timestamps: an import of a file without them, or a run without its request log (run without --no-request-log, and give the run folder)")

// ScenarioAs returns the figures of sc by each tool's definitions: those computed at import
// (its report_as section), else from its request log; from says which.
func ScenarioAs(sc *result.Scenario, log LogFunc) (figs map[string][]Figure, from string, err error) {
	if raw, ok := sc.Extra.Other[SectionReportAs]; ok {
		if err := json.Unmarshal(raw, &figs); err != nil {
			return nil, "", fmt.Errorf("%s: section %s: %w", sc.ID(), SectionReportAs, err)
		}
		return figs, "the imported requests' timestamps", nil
	}
	if log != nil {
		c, err := log(sc)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", sc.ID(), err)
		}
		if c != nil {
			return c.All(), "the request log's timestamps", nil
		}
	}
	return nil, "", fmt.Errorf("%s: %w", sc.ID(), ErrNoRequests)
}

// serving reports whether sc is a serving scenario (it has a time to first token).
func serving(sc *result.Scenario) bool { _, ok := sc.Metrics["ttft_ms"]; return ok }

// WriteAs writes, for each serving scenario of r, its figures by each of tools' definitions,
// named as the tool names them, and the side-by-side table of the figures the tools share.
func WriteAs(w io.Writer, r *result.Run, tools []string, log LogFunc) error {
	n := 0
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		if !serving(sc) {
			continue
		}
		n++
		figs, from, err := ScenarioAs(sc, log)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s: by %s's definitions, from %s\n", sc.ID(), strings.Join(tools, ", "), from)
		side(w, sc, figs, tools)
		for _, t := range tools {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "\n  %s\tvalue\tunit\n", t)
			for _, f := range figs[t] {
				fmt.Fprintf(tw, "  %s\t%s\t%s\n", f.Name, num(f.Value), f.Unit)
			}
			tw.Flush()
		}
	}
	if n == 0 {
		return fmt.Errorf("run %s: no serving scenario (--report-as needs ttft_ms)", r.ID)
	}
	return nil
}

// concept is one figure every tool has, under its own name and definition.
type concept struct {
	label, ours, stat string
	names             map[string]string
}

// concepts are the side-by-side rows: why the tools disagree is in docs/import.md.
var concepts = []concept{
	{"TTFT mean ms", "ttft_ms", "mean", map[string]string{VLLM: "mean_ttft_ms", AIPerf: "time_to_first_token.avg", GuideLLM: "time_to_first_token_ms.successful.mean"}},
	{"TTFT p99 ms", "ttft_ms", "p99", map[string]string{VLLM: "p99_ttft_ms", AIPerf: "time_to_first_token.p99", GuideLLM: "time_to_first_token_ms.successful.percentiles.p99"}},
	{"ITL mean ms", "itl_ms", "mean", map[string]string{VLLM: "mean_itl_ms", AIPerf: "inter_token_latency.avg", GuideLLM: "inter_token_latency_ms.successful.mean"}},
	{"ITL p99 ms", "itl_ms", "p99", map[string]string{VLLM: "p99_itl_ms", AIPerf: "inter_token_latency.p99", GuideLLM: "inter_token_latency_ms.successful.percentiles.p99"}},
	{"TPOT mean ms", "tpot_ms", "mean", map[string]string{VLLM: "mean_tpot_ms", AIPerf: "inter_token_latency.avg", GuideLLM: "time_per_output_token_ms.successful.mean"}},
	{"E2E mean ms", "e2e_ms", "mean", map[string]string{VLLM: "mean_e2el_ms", AIPerf: "request_latency.avg", GuideLLM: "request_latency.successful.mean"}},
	{"requests/s", "requests_per_s", "", map[string]string{VLLM: "request_throughput", AIPerf: "request_throughput", GuideLLM: "requests_per_second.successful.mean"}},
	{"output tokens/s", "output_tokens_per_s", "", map[string]string{VLLM: "output_throughput", AIPerf: "output_token_throughput", GuideLLM: "output_tokens_per_second.successful.mean"}},
}

// side writes the side-by-side table: inferbench's figure and each tool's, by its name.
func side(w io.Writer, sc *result.Scenario, figs map[string][]Figure, tools []string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  figure\tinferbench")
	for _, t := range tools {
		fmt.Fprintf(tw, "\t%s", t)
	}
	fmt.Fprintln(tw)
	for _, c := range concepts {
		fmt.Fprintf(tw, "  %s\t%s", c.label, ours(sc, c.ours, c.stat))
		for _, t := range tools {
			v, ok := lookup(figs[t], c.names[t])
			cell := "-"
			if ok {
				if t == GuideLLM && c.ours == "e2e_ms" {
					v *= 1e3 // guidellm's request_latency is in seconds
				}
				cell = num(v) + " (" + c.names[t] + ")"
			}
			fmt.Fprintf(tw, "\t%s", cell)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// ours is inferbench's own figure of the row: a statistic of a distribution, or a value.
func ours(sc *result.Scenario, metric, stat string) string {
	m, ok := sc.Metrics[metric]
	switch {
	case !ok:
		return "-"
	case m.Value != nil:
		return num(*m.Value) + " (" + metric + ")"
	case m.Summary != nil && stat == "mean":
		return num(m.Summary.Mean) + " (" + metric + ".mean)"
	case m.Summary != nil && stat == "p99":
		return num(m.Summary.P99) + " (" + metric + ".p99)"
	}
	return "-"
}

func lookup(fs []Figure, name string) (float64, bool) {
	for _, f := range fs {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

// num prints a figure with four significant digits.
func num(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.4g", v)
}

// WriteAsCompare writes, for each serving scenario in both runs, its figures by each of tools'
// definitions in the old run and the new, and the change.
func WriteAsCompare(w io.Writer, old, nw *result.Run, tools []string, oldLog, newLog LogFunc) error {
	n := 0
	for i := range nw.Scenarios {
		b := &nw.Scenarios[i]
		a := find(old, b.ID())
		if a == nil || !serving(a) || !serving(b) {
			continue
		}
		n++
		fa, _, err := ScenarioAs(a, oldLog)
		if err != nil {
			return fmt.Errorf("old run: %w", err)
		}
		fb, _, err := ScenarioAs(b, newLog)
		if err != nil {
			return fmt.Errorf("new run: %w", err)
		}
		for _, t := range tools {
			fmt.Fprintf(w, "\n%s by %s's definitions\n", b.ID(), t)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "  %s\told\tnew\tchange\tunit\n", t)
			for _, f := range fb[t] {
				v, ok := lookup(fa[t], f.Name)
				change := "-"
				if ok && v != 0 {
					change = fmt.Sprintf("%+.1f%%", 100*(f.Value-v)/math.Abs(v))
				}
				old := "-"
				if ok {
					old = num(v)
				}
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", f.Name, old, num(f.Value), change, f.Unit)
			}
			tw.Flush()
		}
	}
	if n == 0 {
		return fmt.Errorf("--report-as: no serving scenario in both runs")
	}
	return nil
}

func find(r *result.Run, id string) *result.Scenario {
	for i := range r.Scenarios {
		if r.Scenarios[i].ID() == id {
			return &r.Scenarios[i]
		}
	}
	return nil
}
