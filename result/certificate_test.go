package result

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestCertificateRoundTrip: a certificate is the worst of its checks, writes a check measured
// nothing of (NaN) as 0 rather than failing run.json, and reads back as extra.certificate.
func TestCertificateRoundTrip(t *testing.T) {
	c := NewCertificate([]CertCheck{
		{Name: "errors", Verdict: CertPass},
		{Name: "client_delays", Verdict: CertFail, Value: math.NaN(), Figure: "client_bound: x"},
		{Name: "samples", Verdict: CertWarn, Figure: "p99 needs 368"},
		{Name: "gpu_clocks", Verdict: CertNone},
	})
	if c.Verdict != CertFail || strings.Join(c.Failing(), ",") != "client_delays" || strings.Join(c.Warned(), ",") != "samples" {
		t.Errorf("certificate %+v", c)
	}
	if got, want := c.Line(), "certificate fail: client_delays fails (client_bound: x); samples warns (p99 needs 368)"; got != want {
		t.Errorf("Line() = %q, want %q", got, want)
	}
	data, err := json.Marshal(Extra{Certificate: c})
	if err != nil {
		t.Fatal(err)
	}
	var back Extra
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if k, ok := back.Certificate.Check("client_delays"); !ok || k.Verdict != CertFail || k.Value != 0 {
		t.Errorf("read back %s: %+v", data, back.Certificate)
	}
	if NewCertificate(nil).Verdict != CertPass {
		t.Error("a certificate without checks does not pass")
	}
}

// TestTallyCountsCertificates: a run's summary counts its scenarios by their certificate's
// verdict (the dashboard's runs list reads it from the store), and has none without any.
func TestTallyCountsCertificates(t *testing.T) {
	r := &Run{Scenarios: []Scenario{
		{Status: StatusOK, Extra: Extra{Certificate: NewCertificate([]CertCheck{{Name: "a", Verdict: CertFail}})}},
		{Status: StatusOK, Extra: Extra{Certificate: NewCertificate([]CertCheck{{Name: "a", Verdict: CertPass}})}},
		{Status: StatusOK, Extra: Extra{Certificate: NewCertificate([]CertCheck{{Name: "a", Verdict: CertPass}})}},
		{Status: StatusOK},
	}}
	r.Tally()
	if got := r.Summary.Certificates; got != (CertCounts{Pass: 2, Fail: 1}) {
		t.Errorf("certificates %+v, want 1 fail and 2 pass", got)
	}
	b, err := json.Marshal(r.Summary)
	if err != nil || !strings.Contains(string(b), `"certificates":{"pass":2,"fail":1}`) {
		t.Errorf("summary JSON %s, %v", b, err)
	}
	r.Scenarios = r.Scenarios[3:]
	r.Tally()
	if b, _ := json.Marshal(r.Summary); strings.Contains(string(b), "certificates") {
		t.Errorf("summary JSON %s holds certificates without any", b)
	}
}
