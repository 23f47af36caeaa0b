package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// The golden comparison of the example suite (TestExampleSuite): what the summary table and
// run.json say, with what varies from run to run or host to host taken out. Kept: every
// scenario's id and status, the table's columns (a number or "-"), each scenario's metric names
// and extra sections, the skip reasons that do not depend on the host, and the run's top-level
// shape. Taken out: ids, paths and times; numbers; warnings, advice, the budgets' verdicts (the
// example's budgets are on latencies) and the client_bound and errors_by_kind sections (they
// follow timing noise and the mock's random failures); the
// monitors' metrics (they follow what the host can sample); and, for scenarios that need a GPU
// or a Python module, their status ("host-dependent").
//
// testdata/demo.golden was written by the build before the run pipeline moved into package run
// (main 204e0aa, with INFERBENCH_GOLDEN_BIN pointing at its binary and -update): the test shows
// that today's build prints and writes the same. Since then, -update on later trees added only
// what they meant to add: the "logs" key of the three scenarios that print (their output logs).

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
	countsLine = regexp.MustCompile(`^(\d+) scenarios: \d+ ok, (\d+) failed, \d+ skipped$`)
	budgetLine = regexp.MustCompile(`^budgets: \d+ checked, \d+ exceeded$`)
)

// demoProjection is the part of a run of the example suite that must not change: its summary
// table (stdout) and its run.json.
func demoProjection(t *testing.T, stdout string, runJSON []byte, host map[string]bool) string {
	t.Helper()
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
		case f[0] == "skipped":
			if !host[strings.TrimSuffix(f[1], ":")] {
				b.WriteString(line + "\n")
			}
		case f[0] == "results:":
			b.WriteString("results: DIR\n")
		case countsLine.MatchString(line):
			m := countsLine.FindStringSubmatch(line)
			fmt.Fprintf(&b, "%s scenarios: # ok, %s failed, # skipped\n", m[1], m[2])
		case budgetLine.MatchString(line):
			b.WriteString("budgets: # checked, # exceeded\n")
		case strings.HasPrefix(line, "BUDGET EXCEEDED"):
		case host[f[0]]:
			fmt.Fprintf(&b, "%s host-dependent\n", f[0])
		default:
			for i, w := range f {
				if number.MatchString(w) {
					f[i] = "#"
				}
			}
			b.WriteString(strings.Join(f, " ") + "\n")
		}
	}

	var r map[string]any
	if err := json.Unmarshal(runJSON, &r); err != nil {
		t.Fatal(err)
	}
	section := strings.TrimRight(b.String(), "\n") + "\n" // no trailing blank line either
	b.Reset()
	b.WriteString(section)
	b.WriteString("\n# run.json\n")
	fmt.Fprintf(&b, "keys: %s\n", strings.Join(sortedKeys(r), " "))
	fmt.Fprintf(&b, "schema: %v\n", r["schema"])
	if sum, ok := r["summary"].(map[string]any); ok {
		fmt.Fprintf(&b, "summary: total %v, failed %v\n", sum["total"], sum["failed"])
	}
	scs, _ := r["scenarios"].([]any)
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
		}
	}
	return b.String()
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
