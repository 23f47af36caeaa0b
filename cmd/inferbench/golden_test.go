package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// The golden comparison of the example suite (TestExampleSuite, which runs what `make demo`
// runs): what the summary table and run.json say, with what varies from run to run or host to
// host taken out, so that the golden alone holds "unchanged apart from the id and timings".
// Kept: every scenario's id and status; in the table, the scenario, its status and N (the
// measured iterations that succeeded) with every other column a number or "-"; the counts line
// and the budgets checked; in run.json, each scenario's params, warm-up and measured iterations
// (and failed ones), metric names, budgets (metric and bound), extra sections and the keys inside
// resources, server, slo (with its objectives), steady_window and sweep, and the skip reasons
// that do not depend on the host; the run's top-level shape and the command line. Taken out: ids,
// paths and times; timings; warnings, notes, advice and the budgets' verdicts (the example's
// budgets are on latencies); the client_bound and errors_by_kind sections (they follow timing
// noise); the monitors' metrics, the sources a host lacks (resources' unavailable) and the
// monitors' warnings (a failed read of a process that just exited, on a loaded machine); and, for
// scenarios that need a GPU or a Python module, everything but the fact ("host-dependent").
//
// testdata/demo.golden was first written by the build before the run pipeline moved into package
// run (main 204e0aa, with INFERBENCH_GOLDEN_BIN pointing at its binary and -update). It was
// rewritten when the test started to run `make demo`'s command (benches/ only, default
// iterations) and to keep the fixed numbers and the keys of the extra sections.

// hostDependent returns the ids of the example suite's scenarios whose requirements other than
// a command (python3) depend on the host: a GPU, a Python module.
func hostDependent(t *testing.T, repo string) map[string]bool {
	t.Helper()
	benches, err := suite.Load(nil, repo)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, b := range benches {
		for _, sc := range b.Expand(nil) {
			reqs := append([]string(nil), b.Requires...)
			if k, ok := subject.Lookup(b.Kind); ok && k.Requires != nil {
				reqs = append(reqs, k.Requires(b.Config, sc.Params)...)
			}
			for _, r := range reqs {
				if !strings.HasPrefix(r, "command:") {
					out[sc.ID()] = true
				}
			}
		}
	}
	return out
}

// monitorMetric matches the metrics the resource monitors add (docs/metrics.md, "Resources and
// energy"), and memory_mb, which they set for subjects that report none.
var monitorMetric = regexp.MustCompile(`^(peak_rss_mb|rss_\w+|cpu_pct|cpu_s|io_\w+|gpu_\w+|\w*energy\w*|co2e\w*|memory_mb)$`)

var (
	number     = regexp.MustCompile(`^[-+]?[0-9.]+(e[-+]?[0-9]+)?%?$`)
	countsLine = regexp.MustCompile(`^(\d+) scenarios: (\d+) ok, (\d+) failed, (\d+) skipped$`)
	budgetLine = regexp.MustCompile(`^budgets: (\d+) checked, \d+ exceeded$`)
)

// extraKeys are the extra sections whose keys the projection keeps (the monitors' unavailable
// sources aside).
var extraKeys = []string{"resources", "server", "slo", "steady_window", "sweep"}

// demoProjection is the part of a run of the example suite that must not change: its summary
// table (stdout) and its run.json.
func demoProjection(t *testing.T, stdout string, runJSON []byte, host map[string]bool) string {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal(runJSON, &r); err != nil {
		t.Fatal(err)
	}
	scs, _ := r["scenarios"].([]any)
	// What the host-dependent scenarios add to the counts.
	hostStatus, hostBudgets := map[string]int{}, 0
	for _, x := range scs {
		s, _ := x.(map[string]any)
		if host[fmt.Sprintf("%v/%v", s["benchmark"], s["scenario"])] {
			hostStatus[fmt.Sprint(s["status"])]++
			if b, ok := s["budgets"].(map[string]any); ok && s["status"] == "ok" {
				hostBudgets += len(b)
			}
		}
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }

	var b strings.Builder
	b.WriteString("# stdout\n")
	for _, line := range strings.Split(strings.TrimRight(stdout, "\n"), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
			// One blank line however many: the advice and warnings it may precede, dropped
			// below, come and go with the machine's load.
			if !strings.HasSuffix(b.String(), "\n\n") {
				b.WriteString("\n")
			}
		case f[0] == "warning", f[0] == "note", f[0] == "advice":
		case f[0] == "certificates":
			b.WriteString(line + "\n")
		case strings.HasPrefix(line, "  ") && len(f) > 2 && f[1] == "certificate":
			// A scenario's certificate: its verdict and checks come and go with the machine's load.
			b.WriteString("  " + f[0] + " certificate #\n")
		case f[0] == "skipped":
			if !host[strings.TrimSuffix(f[1], ":")] {
				b.WriteString(line + "\n")
			}
		case f[0] == "results:":
			b.WriteString("results: DIR\n")
		case f[0] == "open" && len(f) > 1 && strings.HasSuffix(f[1], "/report.html"):
			// The next steps name this run's folder.
			f[1] = "DIR/report.html"
			b.WriteString(strings.Join(f, " ") + "\n")
		case countsLine.MatchString(line):
			m := countsLine.FindStringSubmatch(line)
			fmt.Fprintf(&b, "%s scenarios: %d ok, %s failed, %d skipped, besides %d host-dependent\n",
				m[1], atoi(m[2])-hostStatus["ok"], m[3], atoi(m[4])-hostStatus["skipped"], hostStatus["ok"]+hostStatus["skipped"])
		case budgetLine.MatchString(line):
			m := budgetLine.FindStringSubmatch(line)
			fmt.Fprintf(&b, "budgets: %d checked besides host-dependent ones, # exceeded\n", atoi(m[1])-hostBudgets)
		case strings.HasPrefix(line, "BUDGET EXCEEDED"):
		case host[f[0]]:
			// A host-dependent row: present where the framework is installed (it ran), absent
			// where it is not (skips are grouped by reason, without rows).
		default:
			// A row: scenario, status and N kept; the timings masked.
			for i, w := range f {
				if i > 2 && number.MatchString(w) {
					f[i] = "#"
				}
			}
			b.WriteString(strings.Join(f, " ") + "\n")
		}
	}

	section := strings.TrimRight(b.String(), "\n") + "\n" // no trailing blank line either
	b.Reset()
	b.WriteString(section)
	b.WriteString("\n# run.json\n")
	fmt.Fprintf(&b, "keys: %s\n", strings.Join(sortedKeys(r), " "))
	fmt.Fprintf(&b, "schema: %v\n", r["schema"])
	if c, ok := r["config"].(map[string]any); ok {
		fmt.Fprintf(&b, "config: args %v, filters %v\n", c["args"], c["filters"])
	}
	if sum, ok := r["summary"].(map[string]any); ok {
		fmt.Fprintf(&b, "summary: total %v, failed %v\n", sum["total"], sum["failed"])
	}
	for _, x := range scs {
		s, _ := x.(map[string]any)
		id := fmt.Sprintf("%v/%v", s["benchmark"], s["scenario"])
		if host[id] {
			fmt.Fprintf(&b, "%s host-dependent\n", id)
			continue
		}
		fmt.Fprintf(&b, "%s %v subject=%v\n", id, s["status"], s["subject"])
		var keys []string
		for _, k := range sortedKeys(s) {
			if k != "warnings" && k != "errors" {
				keys = append(keys, k)
			}
		}
		fmt.Fprintf(&b, "  keys: %s\n", strings.Join(keys, " "))
		if p, ok := s["params"].(map[string]any); ok {
			fmt.Fprintf(&b, "  params: %s\n", pairs(p))
		}
		if it, ok := s["iterations"].(map[string]any); ok {
			fmt.Fprintf(&b, "  iterations: %s\n", pairs(it))
		}
		if bud, ok := s["budgets"].(map[string]any); ok {
			fmt.Fprintf(&b, "  budgets: %s\n", pairs(bud))
		}
		if reason, ok := s["skip_reason"]; ok {
			fmt.Fprintf(&b, "  skip: %v\n", reason)
		}
		if m, ok := s["metrics"].(map[string]any); ok {
			var names []string
			for _, n := range sortedKeys(m) {
				if !monitorMetric.MatchString(n) {
					names = append(names, n)
				}
			}
			fmt.Fprintf(&b, "  metrics: %s\n", strings.Join(names, " "))
		}
		if e, ok := s["extra"].(map[string]any); ok {
			var secs []string
			for _, k := range sortedKeys(e) {
				if k != "client_bound" && k != "errors_by_kind" {
					secs = append(secs, k)
				}
			}
			fmt.Fprintf(&b, "  extra: %s\n", strings.Join(secs, " "))
			for _, k := range extraKeys {
				sec, ok := e[k].(map[string]any)
				if !ok {
					continue
				}
				var inner []string
				for _, ik := range sortedKeys(sec) {
					if !(k == "resources" && (ik == "unavailable" || ik == "warnings")) { // warnings: a sampler's failed reads under load
						inner = append(inner, ik)
					}
				}
				fmt.Fprintf(&b, "    %s: %s\n", k, strings.Join(inner, " "))
				if obj, ok := sec["objectives"].(map[string]any); ok && k == "slo" {
					fmt.Fprintf(&b, "    slo objectives: %s\n", pairs(obj))
				}
			}
		}
	}
	return b.String()
}

// pairs prints a JSON object of fixed values as sorted key=value pairs.
func pairs(m map[string]any) string {
	var out []string
	for _, k := range sortedKeys(m) {
		out = append(out, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return strings.Join(out, " ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkGolden compares got with testdata/name, or rewrites it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s: the example suite's output changed (-want +got):\n%s", name, diff)
	}
}

// demoBinary is the binary TestExampleSuite runs: $INFERBENCH_GOLDEN_BIN (another build, to
// write the golden file from), else this tree's.
func demoBinary(t *testing.T) string {
	if p := os.Getenv("INFERBENCH_GOLDEN_BIN"); p != "" {
		return p
	}
	return build(t)
}
