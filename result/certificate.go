package result

import (
	"fmt"
	"math"
	"strings"
)

// Certificate is a serving scenario's verdict on its own measurement (run.json's
// extra.certificate; docs/certificate.md): whether its figures are the server's or the
// benchmark's, one check at a time, each with the figure it is read from. Verdict is the worst
// check's.
type Certificate struct {
	Verdict string      `json:"verdict"` // CertPass, CertWarn or CertFail
	Checks  []CertCheck `json:"checks"`
}

// CertCheck is one check of a Certificate.
type CertCheck struct {
	// Name is the check's: client_delays, loop_stalls, prefix_cache, output_length, usage,
	// errors, steady_window, samples or gpu_clocks.
	Name    string `json:"name"`
	Verdict string `json:"verdict"` // CertPass, CertWarn, CertFail or CertNone
	// Figure says what was measured against what, in words: "read delay p99 0.21 ms, 0.8% of
	// the TTFT p50 26.3 ms".
	Figure string `json:"figure"`
	// Value is the figure the verdict is read from, in Unit; Limit the value where it fails
	// (0 when the check has no single limit).
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
	Limit float64 `json:"limit,omitempty"`
	// Hint says what to do when the check does not pass.
	Hint string `json:"hint,omitempty"`
}

// Certificate verdicts, from best to worst; CertNone is a check without the data to judge.
const (
	CertPass = "pass"
	CertNone = "n/a"
	CertWarn = "warn"
	CertFail = "fail"
)

// certRank orders verdicts: a certificate's verdict is its checks' worst.
func certRank(v string) int {
	switch v {
	case CertWarn:
		return 2
	case CertFail:
		return 3
	case CertPass:
		return 1
	}
	return 0
}

// WorseCert reports whether verdict a is worse than b.
func WorseCert(a, b string) bool { return certRank(a) > certRank(b) }

// NewCertificate returns the certificate of checks: its verdict is the worst of theirs, and pass
// when none judged. A value or limit that is not finite (not measured) is written as 0.
func NewCertificate(checks []CertCheck) *Certificate {
	c := &Certificate{Verdict: CertPass, Checks: checks}
	for i, k := range checks {
		if math.IsNaN(k.Value) || math.IsInf(k.Value, 0) {
			checks[i].Value = 0
		}
		if math.IsNaN(k.Limit) || math.IsInf(k.Limit, 0) {
			checks[i].Limit = 0
		}
		if WorseCert(k.Verdict, c.Verdict) {
			c.Verdict = k.Verdict
		}
	}
	return c
}

// Failing returns the names of the failing checks, in order.
func (c *Certificate) Failing() []string { return c.with(CertFail) }

// Warned returns the names of the checks that warn, in order.
func (c *Certificate) Warned() []string { return c.with(CertWarn) }

func (c *Certificate) with(v string) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, k := range c.Checks {
		if k.Verdict == v {
			out = append(out, k.Name)
		}
	}
	return out
}

// Check returns the check named name.
func (c *Certificate) Check(name string) (CertCheck, bool) {
	if c != nil {
		for _, k := range c.Checks {
			if k.Name == name {
				return k, true
			}
		}
	}
	return CertCheck{}, false
}

// Line says the certificate in one line: "certificate pass: every check passed", or
// "certificate fail: client_delays fails (read delay p99 ...); samples warns (...)".
func (c *Certificate) Line() string {
	if c == nil {
		return ""
	}
	var parts []string
	for _, v := range []struct{ verdict, says string }{{CertFail, "fails"}, {CertWarn, "warns"}} {
		for _, k := range c.Checks {
			if k.Verdict == v.verdict {
				parts = append(parts, fmt.Sprintf("%s %s (%s)", k.Name, v.says, k.Figure))
			}
		}
	}
	if len(parts) == 0 {
		return "certificate " + c.Verdict + ": every check passed"
	}
	return "certificate " + c.Verdict + ": " + strings.Join(parts, "; ")
}
