package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/result"
)

// certLines are the run's certificates (result.Certificate), one line per serving scenario that
// has one: "ID: certificate fail: ...". Every rendering of a run shows them first.
func certLines(r *result.Run) []string {
	var out []string
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if c := s.Extra.Certificate; c != nil {
			out = append(out, s.ID()+": "+c.Line())
		}
	}
	return out
}

// writeCertificates writes the run's certificates above its table, then a blank line.
func writeCertificates(w io.Writer, r *result.Run) error {
	lines := certLines(r)
	if len(lines) == 0 {
		return nil
	}
	fmt.Fprintln(w, "certificates (is it the server's number? docs/certificate.md):")
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
	}
	_, err := fmt.Fprintln(w)
	return err
}

// certView is a scenario's certificate on the HTML run page.
type certView struct {
	Scenario, Verdict string
	Checks            []result.CertCheck
}

// certViews are the run's certificates for the HTML page.
func certViews(r *result.Run) []certView {
	var out []certView
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if c := s.Extra.Certificate; c != nil {
			out = append(out, certView{Scenario: s.ID(), Verdict: c.Verdict, Checks: c.Checks})
		}
	}
	return out
}

// tooFew marks a percentile of a metric that the certificate's samples check found short of the
// requests it needs (its note says "too few requests: p99 needs 368 ..."): " ?", else "".
func tooFew(s *result.Scenario, metric, p string) string {
	note := s.Metrics[metric].Note
	if i := strings.Index(note, "too few requests: "); i >= 0 && strings.Contains(note[i:], p+" needs") {
		return " ?"
	}
	return ""
}

// certificatesNote says in one line that the runs' certificates differ in a failing check.
func certificatesNote(rep *compare.Report) string {
	n := len(rep.Certificates)
	if n == 1 {
		return rep.Certificates[0]
	}
	return fmt.Sprintf("certificates differ in a failing check in %d scenarios, first %s", n, rep.Certificates[0])
}

// certificatesMarkdown writes, above a pull request's table, that the certificates differ and the
// new run's certificates that do not pass.
func certificatesMarkdown(w io.Writer, rep *compare.Report) {
	if len(rep.Certificates) > 0 {
		fmt.Fprintf(w, "**Certificates differ** (docs/certificate.md): %s\n\n", md(strings.Join(rep.Certificates, "; ")))
	}
	for _, c := range rep.NewCertificates {
		fmt.Fprintf(w, "- %s\n", md(c))
	}
	if len(rep.NewCertificates) > 0 {
		fmt.Fprintln(w)
	}
}
