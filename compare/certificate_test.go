package compare

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// certifiedRuns are an old and a new run of one serving scenario whose TTFT is 30% higher in the
// new one, measured on certificates failing the checks named.
func certifiedRuns(oldFailing, newFailing []string) (*result.Run, *result.Run) {
	rng := rand.New(rand.NewPCG(4, 3))
	cert := func(failing []string) *result.Certificate {
		checks := []result.CertCheck{{Name: "errors", Verdict: result.CertPass}}
		for _, f := range failing {
			checks = append(checks, result.CertCheck{Name: f, Verdict: result.CertFail, Figure: "x"})
		}
		return result.NewCertificate(checks)
	}
	o := scenario("srv", map[string]any{"concurrency": 64}, map[string][]float64{"ttft_ms": lognormal(rng, 40, 10, 0.05)})
	n := scenario("srv", map[string]any{"concurrency": 64}, map[string][]float64{"ttft_ms": lognormal(rng, 40, 13, 0.05)})
	o.Extra.Certificate, n.Extra.Certificate = cert(oldFailing), cert(newFailing)
	return run("a", o), run("b", n)
}

// TestComparisonAcrossFailingCertificate: a regression whose new run's certificate fails
// client_delays is still a regression, marked as measured on a failing certificate, and the
// report says the certificates differ; equal certificates that pass say nothing of it.
func TestComparisonAcrossFailingCertificate(t *testing.T) {
	old, new := certifiedRuns(nil, []string{"client_delays"})
	rep := Runs(old, new, Config{Gate: []string{"ttft_ms"}})
	var reg *Row
	for i := range rep.Rows {
		if rep.Rows[i].Metric == "ttft_ms" {
			reg = &rep.Rows[i]
		}
	}
	if reg == nil || reg.Verdict != Regression {
		t.Fatalf("ttft_ms row %+v, want a regression", reg)
	}
	if got := reg.Uncertified(); got != "measured on a failing certificate: client_delays" {
		t.Errorf("Uncertified() = %q", got)
	}
	if len(rep.Certificates) != 1 || !strings.Contains(rep.Certificates[0], "the new run fails client_delays") {
		t.Errorf("Certificates %q", rep.Certificates)
	}
	if len(rep.NewCertificates) != 1 || !strings.Contains(rep.NewCertificates[0], "certificate fail") {
		t.Errorf("NewCertificates %q", rep.NewCertificates)
	}
	// The same failing check on both sides: the rows are marked, the certificates do not differ.
	old, new = certifiedRuns([]string{"prefix_cache"}, []string{"prefix_cache"})
	rep = Runs(old, new, Config{Gate: []string{"ttft_ms"}})
	if len(rep.Certificates) != 0 || rep.Rows[0].Uncertified() == "" {
		t.Errorf("same failing check: Certificates %q, row %+v", rep.Certificates, rep.Rows[0])
	}
	old, new = certifiedRuns(nil, nil)
	rep = Runs(old, new, Config{Gate: []string{"ttft_ms"}})
	if len(rep.Certificates) != 0 || len(rep.NewCertificates) != 0 || rep.Rows[0].Uncertified() != "" {
		t.Errorf("passing certificates: %q %q %+v", rep.Certificates, rep.NewCertificates, rep.Rows[0])
	}
}
