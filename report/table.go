package report

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/inferbench/inferbench/result"
)

// Table writes the run's summary: the serving scenarios' certificates first, then one line per scenario with its status, sample count and
// latency percentiles, the throughput, and for token streams TTFT, TPOT and tokens/s. Skipped
// scenarios have no row: their reasons follow the table, one line per reason, with errors and
// warnings.
func Table(w io.Writer, r *result.Run) error {
	if err := writeCertificates(w, r); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	streaming, counted, rows := false, false, 0
	for _, s := range r.Scenarios {
		_, ttft := s.Metrics["ttft_ms"]
		_, tokens := s.Metrics["tokens_per_s"]
		_, instr := s.Metrics["instructions"]
		streaming = streaming || ttft || tokens
		counted = counted || instr
		if s.Status != result.StatusSkipped {
			rows++
		}
	}
	head := "SCENARIO\tSTATUS\tN\tP50 ms\tP95 ms\tP99 ms\tCV\tTHROUGHPUT/s\tMEMORY MB"
	if counted {
		// Instruction mode: the count is the figure; the times are valgrind's, far slower.
		head = "SCENARIO\tSTATUS\tN\tINSTRUCTIONS P50\tP50 ms (under valgrind)\tMEMORY MB"
	}
	if streaming {
		head += "\tTTFT P50 ms\tTPOT P50 ms\tTOKENS/s"
	}
	if rows > 0 {
		fmt.Fprintln(tw, head+"\t")
	}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if s.Status == result.StatusSkipped {
			continue // one line per reason below the table (Notes), not a row of dashes each
		}
		cells := []string{s.ID(), s.Status}
		if counted {
			n, instr := "-", "-"
			if in := s.Metrics["instructions"].Summary; in != nil {
				n, instr = fmt.Sprint(in.N), count(in.Median)
			}
			cells = append(cells, n, instr, median(s, "latency_ms"), memory(s))
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
			continue
		}
		if lat := s.Metrics["latency_ms"].Summary; lat != nil {
			cells = append(cells, fmt.Sprint(lat.N), num(lat.Median), num(lat.P95), num(lat.P99), fmt.Sprintf("%.1f%%", 100*lat.CV))
		} else {
			cells = append(cells, "-", "-", "-", "-", "-")
		}
		cells = append(cells, value(s, "throughput_ips"), memory(s))
		if streaming {
			// A Python class's own tokens_per_second (tokens_per_s) when nothing counted the stream's.
			tok := value(s, "output_tokens_per_s")
			if tok == "-" {
				tok = value(s, "tokens_per_s")
			}
			cells = append(cells, median(s, "ttft_ms"), median(s, "tpot_ms"), tok)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeSkew(w, r); err != nil {
		return err
	}
	notes := notesOf(r)
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
	sum := r.Summary
	_, err := fmt.Fprintf(w, "\n%d scenarios: %d ok, %d failed, %d skipped", sum.Total, sum.Succeeded, sum.Failed, sum.Skipped)
	if r.Partial {
		fmt.Fprint(w, " (partial: interrupted)")
	}
	fmt.Fprintln(w)
	return err
}

// notesOf are the lines below the table, most severe first: failures, then warnings (one line
// per kind of warning), then skipped scenarios (one line per reason), then the expected effects (result.IsExpected), which
// say why a figure looks as it does and raise no alarm. Within a severity, scenarios keep their
// order.
func notesOf(r *result.Run) []string {
	var failed, skips, expected []string
	skipped := map[string][]string{} // reason -> scenario ids
	var reasons []string
	type warning struct{ id, text string }
	kinds := map[string][]warning{} // a warning's text with its figures blanked -> its scenarios
	var order []string
	for _, s := range r.Scenarios {
		switch {
		case s.Status == result.StatusSkipped:
			if _, seen := skipped[s.SkipReason]; !seen {
				reasons = append(reasons, s.SkipReason)
			}
			skipped[s.SkipReason] = append(skipped[s.SkipReason], s.ID())
		case s.Error != "":
			failed = append(failed, fmt.Sprintf("FAILED  %s", s.Error))
		}
		if n := startupNote(&s); n != "" {
			expected = append(expected, fmt.Sprintf("note    %s: %s", s.ID(), n))
		}
		for _, warn := range s.Warnings {
			if result.IsExpected(warn) {
				expected = append(expected, fmt.Sprintf("note    %s: %s", s.ID(), warn))
				continue
			}
			k := figures.ReplaceAllString(warn, "#")
			if _, seen := kinds[k]; !seen {
				order = append(order, k)
			}
			kinds[k] = append(kinds[k], warning{s.ID(), warn})
		}
	}
	// One line per kind of warning: the same warning with other figures on several scenarios
	// (noisy latency on a busy machine) reads as its first, and how many more have it.
	var warned []string
	for _, k := range order {
		ws := kinds[k]
		if len(ws) == 1 {
			warned = append(warned, fmt.Sprintf("warning %s: %s", ws[0].id, ws[0].text))
			continue
		}
		warned = append(warned, fmt.Sprintf("warning %s and %d more (each with its own figures in report.html): %s", ws[0].id, len(ws)-1, ws[0].text))
	}
	for _, why := range reasons {
		ids := skipped[why]
		if len(ids) <= 2 {
			for _, id := range ids {
				skips = append(skips, fmt.Sprintf("skipped %s: %s", id, why))
			}
			continue
		}
		skips = append(skips, fmt.Sprintf("skipped %s and %d more: %s", ids[0], len(ids)-1, why))
	}
	for _, why := range unmeasuredOf(r) {
		expected = append(expected, "note    unmeasured on this machine: "+why)
	}
	return slices.Concat(failed, warned, skips, expected)
}

// unmeasuredOf says what the run's monitors could not measure on this machine (energy without
// RAPL counters, GPUs without NVML or nvidia-smi), once each: run.json has it per scenario
// (extra.resources.unavailable); the console and report.html say it once.
func unmeasuredOf(r *result.Run) []string {
	var out []string
	seen := map[string]bool{}
	for i := range r.Scenarios {
		res := r.Scenarios[i].Extra.Resources
		if res == nil {
			continue
		}
		for _, u := range res.Unavailable {
			u = strings.Join(strings.Fields(u), " ") // one line: nvidia-smi's reason follows NVML's
			if seen[u] {
				continue
			}
			seen[u] = true
			switch {
			case strings.HasPrefix(u, "rapl:"):
				u = "energy (RAPL counters): " + strings.TrimSpace(strings.TrimPrefix(u, "rapl:"))
			case strings.HasPrefix(u, "gpu:"):
				u = "GPU: " + strings.TrimSpace(strings.TrimPrefix(u, "gpu:"))
			}
			out = append(out, u)
		}
	}
	return out
}

// startupNote says, for a command whose own latency_ms (metrics: json) is a small part of its
// process round trip (harness_latency_ms), that its throughput counts each process's start-up:
// 0.36 ms beside 4.8 items/s reads as a contradiction otherwise.
func startupNote(s *result.Scenario) string {
	own, trip := s.Metrics["latency_ms"].Summary, s.Metrics["harness_latency_ms"].Summary
	if s.Status != result.StatusOK || own == nil || trip == nil || !(trip.Median > 2*own.Median) {
		return ""
	}
	return fmt.Sprintf("expected: throughput counts each process's start-up: the command's own latency_ms p50 %s ms, its process round trip (harness_latency_ms) p50 %s ms",
		num(own.Median), num(trip.Median))
}

// figures are the numbers of a warning's text, blanked to tell its kind.
var figures = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)

// count formats an instruction count with an SI suffix to four significant digits: 13.17M.
func count(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "?"
	case a >= 1e9:
		return fmt.Sprintf("%.4gG", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.4gM", v/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.4gk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// num formats a figure to about three significant digits, keeping large numbers whole.
func num(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "?" // a table never shows NaN or an infinity
	case v == 0:
		return "0"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	case a >= 0.01:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func value(s *result.Scenario, name string) string {
	if v, ok := s.Metrics[name].Center(); ok {
		return num(v)
	}
	return "-"
}

// memory is the console's MEMORY MB: the subject's own peak figure (memory_mb: a worker's RSS,
// a benchmark's reported memory) when it has one, else the peak resident memory measured
// around it (peak_rss_mb).
func memory(s *result.Scenario) string {
	if v := value(s, "memory_mb"); v != "-" {
		return v
	}
	return value(s, "peak_rss_mb")
}

func median(s *result.Scenario, name string) string {
	if sum := s.Metrics[name].Summary; sum != nil {
		return num(sum.Median)
	}
	return "-"
}
