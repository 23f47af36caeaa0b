package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
)

// Exit codes of `inferbench compare`.
const (
	exitOK         = 0
	exitRegression = 3
)

// A tally counts one kind's comparisons: the A/A ones (two runs of the unchanged scenario) and
// the slowdown ones (a run of the unchanged scenario against a slowed one). A comparison
// counts once, whatever number of its metrics failed: "a run fails" is what a gate sees.
type tally struct {
	kind, scenario, injected string

	aa, aaFailed    int                  // A/A comparisons, of which exited 3
	slow, slowFound int                  // slowdown comparisons, of which exited 3
	errors          []string             // runs or comparisons that neither passed nor failed
	failedMetrics   map[string]int       // metric -> A/A comparisons it failed
	failedDeltas    map[string][]float64 // metric -> its change in those comparisons, %
	failedLimits    map[string][]float64 // metric -> the threshold it was held to, %
	ratios          []float64            // slowed / unchanged median of the primary metric
	iterations      int                  // measured iterations of one run
	runs            int
	elapsed         time.Duration
	thresholds      []float64 // the primary metric's threshold in each slowdown comparison, %
	cpuThresholds   []float64 // cpu_ms's, in the slowdown comparisons where it gated, %
	thresholdRuns   int       // slowdown comparisons whose threshold came from stored runs' noise
	pairs           string    // the design, when the comparisons are pairs of a few runs
}

func newTally(k kind) *tally {
	return &tally{kind: k.name, scenario: k.scenario, injected: k.injected,
		failedMetrics: map[string]int{}, failedDeltas: map[string][]float64{}, failedLimits: map[string][]float64{}}
}

// A failure is a gated row of a comparison that failed: its metric, change and threshold (%).
type failure struct {
	metric           string
	delta, threshold float64
}

// addAA counts an A/A comparison by the exit code of compare and the rows it failed on.
func (t *tally) addAA(exit int, failed []failure) {
	switch exit {
	case exitOK:
		t.aa++
	case exitRegression:
		t.aa++
		t.aaFailed++
		for _, f := range failed {
			t.failedMetrics[f.metric]++
			if f.threshold > 0 {
				t.failedDeltas[f.metric] = append(t.failedDeltas[f.metric], f.delta)
				t.failedLimits[f.metric] = append(t.failedLimits[f.metric], f.threshold)
			}
		}
	default:
		t.errors = append(t.errors, fmt.Sprintf("A/A compare exited %d", exit))
	}
}

// addSlow counts a slowdown comparison by the exit code of compare and the primary metric's
// row: ratio is the slowed run's median over the unchanged run's (0 when unknown), threshold
// the percentage it was held to, fromRuns whether that came from the stored runs' noise.
func (t *tally) addSlow(exit int, ratio, threshold float64, fromRuns bool) {
	switch exit {
	case exitOK, exitRegression:
		t.slow++
		if exit == exitRegression {
			t.slowFound++
		}
		if ratio > 0 {
			t.ratios = append(t.ratios, ratio)
		}
		if threshold > 0 {
			t.thresholds = append(t.thresholds, threshold)
		}
		if fromRuns {
			t.thresholdRuns++
		}
	default:
		t.errors = append(t.errors, fmt.Sprintf("slowdown compare exited %d", exit))
	}
}

// compareAA compares two unchanged runs and counts the comparison (or the error that stopped it).
func (t *tally) compareAA(w *workspace, old, new string) {
	c, err := w.compare(old, new)
	if err != nil {
		t.errors = append(t.errors, err.Error())
		return
	}
	t.addAA(c.exit, c.failed)
}

// compareSlow compares a slowed run with an unchanged one and counts the comparison (or the
// error that stopped it).
func (t *tally) compareSlow(w *workspace, base, slowed string) {
	c, err := w.compare(base, slowed)
	if err != nil {
		t.errors = append(t.errors, err.Error())
		return
	}
	ratio := 0.0
	if c.primaryOld > 0 {
		ratio = c.primaryNew / c.primaryOld
	}
	t.addSlow(c.exit, ratio, c.threshold, c.thresholdRuns > 0)
	if c.cpuThreshold > 0 && (c.exit == exitOK || c.exit == exitRegression) {
		t.cpuThresholds = append(t.cpuThresholds, c.cpuThreshold)
	}
}

func rate(n, of int) string {
	if of == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

func median(xs []float64) float64 {
	r := slices.Clone(xs)
	sort.Float64s(r)
	m := r[len(r)/2]
	if len(r)%2 == 0 {
		m = (r[len(r)/2-1] + r[len(r)/2]) / 2
	}
	return m
}

// slowdown is the median measured change of the primary metric in the slowdown comparisons.
func (t *tally) slowdown() string {
	if len(t.ratios) == 0 {
		return "?"
	}
	return fmt.Sprintf("%+.1f%%", 100*(median(t.ratios)-1))
}

// threshold is the median threshold of the primary metric in the slowdown comparisons, and
// in how many it came from the stored runs' noise.
func (t *tally) threshold() string {
	if len(t.thresholds) == 0 {
		return "?"
	}
	s := fmt.Sprintf("%.1f%% (%d of %d from stored runs)", median(t.thresholds), t.thresholdRuns, t.slow)
	if len(t.cpuThresholds) > 0 {
		s += fmt.Sprintf("; cpu_ms %.1f%% (gated in %d of %d: CPU-bound)", median(t.cpuThresholds), len(t.cpuThresholds), t.slow)
	}
	return s
}

// failedOn lists the metrics that failed A/A comparisons, most often first.
func (t *tally) failedOn() string {
	if len(t.failedMetrics) == 0 {
		return "–"
	}
	names := slices.Collect(maps.Keys(t.failedMetrics))
	sort.Slice(names, func(i, j int) bool {
		a, b := t.failedMetrics[names[i]], t.failedMetrics[names[j]]
		return a > b || a == b && names[i] < names[j]
	})
	var parts []string
	for _, n := range names {
		p := fmt.Sprintf("%s ×%d", n, t.failedMetrics[n])
		if d := t.failedDeltas[n]; len(d) > 0 {
			p += fmt.Sprintf(" (median change %+.1f%%, threshold %.1f%%)", median(d), median(t.failedLimits[n]))
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// writeTable writes the tallies as a markdown table.
func writeTable(w io.Writer, ts []*tally) {
	fmt.Fprintln(w, "| kind | A/A comparisons | false failures | rate | slowdown comparisons | detected | rate | iterations | measured slowdown | primary threshold |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, t := range ts {
		fmt.Fprintf(w, "| %s | %d | %d | %s | %d | %d | %s | %d | %s | %s |\n",
			t.kind, t.aa, t.aaFailed, rate(t.aaFailed, t.aa), t.slow, t.slowFound, rate(t.slowFound, t.slow),
			t.iterations, t.slowdown(), t.threshold())
	}
}

// writeDetails writes what each kind ran, how the slowdown was injected, what failed the A/A
// comparisons, and the errors and time.
func writeDetails(w io.Writer, ts []*tally) {
	fmt.Fprintln(w, "| kind | scenario | slowdown injected | A/A failures on | runs | errors | time |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, t := range ts {
		errs := "–"
		if len(t.errors) > 0 {
			errs = fmt.Sprintf("%d (first: %s)", len(t.errors), t.errors[0])
		}
		runs := fmt.Sprint(t.runs)
		if t.pairs != "" {
			runs += ": " + t.pairs
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n",
			t.kind, t.scenario, t.injected, t.failedOn(), runs, errs, t.elapsed.Round(time.Second))
	}
}

// Markers of the generated section of docs/measurements/verdicts.md.
const (
	beginMarker = "<!-- calibrate-gate: begin (generated by make calibrate-gate; edits here are replaced) -->"
	endMarker   = "<!-- calibrate-gate: end -->"
)

// replaceSection puts body between the markers of doc, or appends the markers and body to it.
func replaceSection(doc, body string) string {
	return replaceMarked(doc, body, beginMarker, endMarker)
}

// Markers of the paired path's section (-path ref).
const (
	refBeginMarker = "<!-- calibrate-gate ref: begin (generated by make calibrate-ref; edits here are replaced) -->"
	refEndMarker   = "<!-- calibrate-gate ref: end -->"
	// Instruction mode's (-path ref -measure instructions) has its own section.
	refCountBeginMarker = "<!-- calibrate-gate ref instructions: begin (generated by make calibrate-ref MEASURE=instructions; edits here are replaced) -->"
	refCountEndMarker   = "<!-- calibrate-gate ref instructions: end -->"
)

// marked is where doc's markers begin and end are: i at begin's start, j at end's; ok false
// without them.
func marked(doc, beginMarker, endMarker string) (i, j int, ok bool) {
	i = strings.Index(doc, beginMarker)
	j = strings.Index(doc, endMarker)
	return i, j, i >= 0 && j >= i
}

// markedBody is what doc holds between the markers begin and end ("" without them).
func markedBody(doc, beginMarker, endMarker string) string {
	i, j, ok := marked(doc, beginMarker, endMarker)
	if !ok {
		return ""
	}
	return strings.Trim(doc[i+len(beginMarker):j], "\n")
}

// replaceMarked is replaceSection between the markers begin and end.
func replaceMarked(doc, body, beginMarker, endMarker string) string {
	block := beginMarker + "\n" + strings.TrimRight(body, "\n") + "\n" + endMarker
	i, j, ok := marked(doc, beginMarker, endMarker)
	if !ok {
		if doc != "" && !strings.HasSuffix(doc, "\n") {
			doc += "\n"
		}
		if doc != "" {
			doc += "\n"
		}
		return doc + block + "\n"
	}
	return doc[:i] + block + doc[j+len(endMarker):]
}
