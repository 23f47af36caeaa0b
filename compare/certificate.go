package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferbench/inferbench/result"
)

// certifiedPair says how two runs' certificates of one scenario (result.Certificate) differ:
// the checks that fail on either side, and a line for the report's headline when they fail on
// one side and not the other (the two runs measured different things: one of them the
// benchmark's limits, a warm cache, a server stopping short).
func certifiedPair(o, n *result.Scenario) (failing []string, differ string) {
	oc, nc := o.Extra.Certificate, n.Extra.Certificate
	of, nf := oc.Failing(), nc.Failing()
	for _, k := range append(slices.Clone(of), nf...) {
		if !slices.Contains(failing, k) {
			failing = append(failing, k)
		}
	}
	var onlyOld, onlyNew []string
	for _, k := range of {
		if !slices.Contains(nf, k) {
			onlyOld = append(onlyOld, k)
		}
	}
	for _, k := range nf {
		if !slices.Contains(of, k) {
			onlyNew = append(onlyNew, k)
		}
	}
	var parts []string
	if len(onlyNew) > 0 {
		parts = append(parts, "the new run fails "+strings.Join(onlyNew, ", "))
	}
	if len(onlyOld) > 0 {
		parts = append(parts, "the old run fails "+strings.Join(onlyOld, ", "))
	}
	if len(parts) > 0 {
		differ = fmt.Sprintf("%s: certificates differ: %s (docs/certificate.md): its changes are of the measurement, not only the server's", n.ID(), strings.Join(parts, "; "))
	}
	return failing, differ
}

// markCertified sets each row's FailingCertificate from its scenario's failing checks (by
// Row.ID).
func markCertified(rows []Row, failing map[string][]string) {
	for i := range rows {
		if f := failing[rows[i].ID()]; len(f) > 0 {
			rows[i].FailingCertificate = f
		}
	}
}

// Uncertified returns the note for a row measured on a failing certificate, "measured on a
// failing certificate: client_delays", or "".
func (r *Row) Uncertified() string {
	if len(r.FailingCertificate) == 0 {
		return ""
	}
	return "measured on a failing certificate: " + strings.Join(r.FailingCertificate, ", ")
}
