package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/result"
)

// certRun is a run of one serving scenario, ttft_ms of median ms, whose certificate fails the
// checks named.
func certRun(id string, ms float64, failing ...string) *result.Run {
	xs := make([]float64, 40)
	for i := range xs {
		xs[i] = ms * (1 + 0.01*float64(i%5))
	}
	checks := []result.CertCheck{{Name: "errors", Verdict: result.CertPass, Figure: "0.0% of requests failed"}}
	for _, f := range failing {
		checks = append(checks, result.CertCheck{Name: f, Verdict: result.CertFail, Figure: "read delay p99 5 ms, 25.0% of the ttft p50 20 ms"})
	}
	sc := result.Scenario{Benchmark: "srv", Scenario: "c=64", Params: map[string]any{"concurrency": 64}, Status: result.StatusOK,
		Metrics: map[string]result.Metric{"ttft_ms": result.SampleMetric("ttft_ms", xs)}}
	sc.Extra.Certificate = result.NewCertificate(checks)
	r := &result.Run{Schema: result.Schema, ID: id, Scenarios: []result.Scenario{sc}}
	r.Tally()
	return r
}

// TestCertificateFirst: the run's table, its HTML page, and a comparison's text and markdown each
// lead with the certificate; a regression on a failing certificate says so.
func TestCertificateFirst(t *testing.T) {
	var b bytes.Buffer
	if err := Table(&b, certRun("b", 13, "client_delays")); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if at, head := strings.Index(text, "srv/c=64: certificate fail: client_delays fails (read delay p99 5 ms"), strings.Index(text, "SCENARIO"); at < 0 || at > head {
		t.Errorf("table does not lead with the certificate:\n%s", text)
	}
	b.Reset()
	if err := RunHTML(&b, certRun("b", 13, "client_delays"), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if r := newRow(&tooFewRun().Scenarios[0]); r.P99 != "20.00 ?" || r.P95 != "20.00" {
		t.Errorf("p95 %q, p99 %q: want only the p99 marked", r.P95, r.P99)
	}
	if at, cards := strings.Index(html, "<h2>Certificates</h2>"), strings.Index(html, `<section class="cards">`); at < 0 || at > cards {
		t.Errorf("HTML page does not lead with the certificates")
	}
	rep := compare.Runs(certRun("a", 10), certRun("b", 13, "client_delays"), compare.Config{Gate: []string{"ttft_ms"}})
	b.Reset()
	if err := CompareText(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"certificates differ: the new run fails client_delays", "REGRESSION (limit +15%), measured on a failing certificate: client_delays"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("compare text lacks %q:\n%s", want, b.String())
		}
	}
	if !strings.HasPrefix(b.String(), "FAIL: ") {
		t.Errorf("compare text does not lead with its headline:\n%s", b.String())
	}
	b.Reset()
	if err := CompareMarkdown(&b, rep); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if at, table := strings.Index(md, "**Certificates differ**"), strings.Index(md, "| Scenario |"); at < 0 || at > table || !strings.Contains(md, "measured on a failing certificate: client\\_delays") && !strings.Contains(md, "measured on a failing certificate: client_delays") {
		t.Errorf("markdown:\n%s", md)
	}
}

// tooFewRun is a serving run whose e2e p99 the certificate found short of its requests.
func tooFewRun() *result.Run {
	r := certRun("c", 20)
	sc := &r.Scenarios[0]
	e2e := result.SampleMetric("e2e_ms", []float64{20, 20, 20})
	e2e.Note = "too few requests: p99 needs 368 (effective 50 of 50)"
	sc.Metrics["e2e_ms"] = e2e
	return r
}
