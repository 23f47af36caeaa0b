package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/sysinfo"
)

// document is the generated section of docs/measurements/verdicts.md.
func document(o options, ts []*tally, table string, started time.Time, load0 string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s UTC (%s), commit %s, on %s; load average %s at the start, %s at the end.\n\n",
		started.Format("2006-01-02 15:04"), time.Since(started).Round(time.Second), commit(), machine(), load0, sysinfo.LoadAvg())
	fmt.Fprintf(&b, "Command: `make calibrate-gate N=%d`, which runs `%s`.\n\n", o.n, strings.TrimSpace(o.command))
	b.WriteString(table)
	fmt.Fprintf(&b, `
How it counts, per kind, in a workspace of its own (its store, its results): %d runs of the
unchanged scenario are stored first, so that the noise-aware thresholds have their history. Then
runs go A0 S0 A1 A2 S1 A3 …: %d runs of the unchanged scenario (A, stored), each compared with
the A run before it (%d A/A comparisons), and %d runs with the slowdown (S, not stored, so that
the history stays the unchanged scenario's), each compared with the A run before it and the A run
after it (%d slowdown comparisons). A comparison is `+"`inferbench compare OLD NEW`"+` at its
defaults; it counts as failed when it exits 3, whatever number of metrics failed. Every run is
`+"`inferbench run`"+` at the definition's defaults (3 warm-up and 30 measured iterations,
unless -iterations says otherwise; monitors on). "measured slowdown" is the median change of the primary metric in the slowdown
comparisons (latency_ms; ttft_ms for OpenAI); "primary threshold" is the median threshold it was
held to, and in how many comparisons that threshold came from the stored runs' noise.

A kind marked "(loaded)" ran with a busy loop beside it (-load): one thread of this program
spinning for the whole of the kind's runs and comparisons, as a neighbour's build or test does on
a shared 2-core CI runner. The command, the Go function and the Python functions are CPU-bound
(compare's cpuShare), so they are judged by their CPU time (`+"`cpu_ms`"+`) beside their wall time; the
"primary threshold" column then gives `+"`cpu_ms`"+`'s too.

The worker's runs cost seconds each (the Python worker imports torch), so it is measured in
pairs instead (its "runs" column says how): after the same history, m runs of the unchanged
scenario, stored, compared in every pair (m(m-1)/2 ≥ %d), then slowed runs, not stored, each
compared with every one of the m.
These comparisons share runs and are not independent: one run slowed by the machine fails against
all the others, so its rates are coarser than the chain's.
`, o.history, o.n+1, o.n, o.n/2, o.n, o.n)
	return b.String()
}
