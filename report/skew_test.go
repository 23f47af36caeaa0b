package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
)

// mergedAgents is a run merged from two load agents, agent 1 client-bound and 4.5 ms late.
func mergedAgents() *result.Run {
	f := func(x float64) *float64 { return &x }
	t0 := time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC)
	rps := 199.8
	return &result.Run{ID: "m", Merged: &result.MergeInfo{Kind: "agents", Count: 2}, Scenarios: []result.Scenario{
		{Benchmark: "openai", Scenario: "rate=200", Status: result.StatusOK,
			Metrics: map[string]result.Metric{"requests_per_s": {Unit: "1/s", Better: "higher", Value: &rps}},
			Extra: result.Extra{ClientBound: true, Agents: &result.Skew{StartSpreadMS: 4.5, EndSpreadMS: 12.25, ClientBound: []int{1}, Agents: []result.AgentSkew{
				{Agent: 0, Host: "client-a", Start: t0, StartLagMS: f(1.5), ClockOffsetMS: f(-0.75), Requests: 800, RequestsPerS: 100.1, ScheduleLagP99MS: f(0.4), ClientCPUCores: f(0.3)},
				{Agent: 1, Host: "client-b", Start: t0, StartLagMS: f(6), Requests: 799, Failed: 3, RequestsPerS: 99.7, ScheduleLagP99MS: f(61), ClientCPUCores: f(1.95), ClientBound: true},
			}}}},
		{Benchmark: "unit", Scenario: "plain", Status: result.StatusOK},
	}}
}

// TestSkewTable: the merge's table shows each agent's skew, not only run.json.
func TestSkewTable(t *testing.T) {
	var b bytes.Buffer
	if err := Table(&b, mergedAgents()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^SCENARIO +AGENT +HOST +START LAG ms +CLOCK OFFSET ms +REQUESTS +FAILED +REQ/s +SCHED LAG P99 ms +CLIENT CPU cores +CLIENT BOUND`),
		regexp.MustCompile(`(?m)^openai/rate=200 +0 +client-a +1\.50 +-0\.750 +800 +0 +100\.1 +0\.400 +0\.300 +no`),
		regexp.MustCompile(`(?m)^openai/rate=200 +1 +client-b +6\.00 +- +799 +3 +99\.70 +61\.00 +1\.95 +YES`),
		regexp.MustCompile(`(?m)^openai/rate=200: start spread 4\.50 ms, end spread 12\.25 ms$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("table lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "unit/plain: start spread") {
		t.Errorf("a scenario with no agents got a skew line:\n%s", out)
	}
	// A run that merged no agents prints no skew.
	b.Reset()
	Table(&b, &result.Run{Scenarios: []result.Scenario{{Benchmark: "unit", Scenario: "plain", Status: result.StatusOK}}})
	if strings.Contains(b.String(), "agent skew") {
		t.Errorf("skew printed for a plain run:\n%s", b.String())
	}
}

// TestSkewHTML: report.html of a merged agents run has the skew table, the client-bound agent
// marked.
func TestSkewHTML(t *testing.T) {
	var b bytes.Buffer
	if err := RunHTML(&b, mergedAgents(), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	at := strings.Index(html, "<h3>Agent skew</h3>")
	if at < 0 {
		t.Fatal("report.html has no agent skew table")
	}
	table := html[at:]
	table = table[:strings.Index(table, "</table>")]
	for _, want := range []string{
		`<td rowspan="2">openai/rate=200</td><td rowspan="2">4.50</td><td rowspan="2">12.25</td><td>0</td><td>client-a</td><td>1.50</td><td>-0.750</td><td>800</td><td>0</td><td>100.1</td><td>0.400</td><td>0.300</td><td>no</td>`,
		`<tr class="st-failed"><td>1</td><td>client-b</td><td>6.00</td><td>-</td><td>799</td><td>3</td><td>99.70</td><td>61.00</td><td>1.95</td><td><b>yes</b></td>`,
	} {
		if !strings.Contains(table, want) {
			t.Errorf("skew table lacks %s:\n%s", want, table)
		}
	}
	if strings.Count(html, "<h3>Agent skew</h3>") != 1 {
		t.Error("the skew table is not in the serving benchmark's section only")
	}
}
