package serveimport

import (
	"fmt"
	"math"

	"github.com/inferbench/inferbench/internal/certify"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// certificate sets an imported scenario's certificate (package certify), as a run's own serving
// scenario gets one, from the requests the file kept: their errors, output lengths, steady window
// and the requests behind each percentile. Another tool records none of its client's own delays,
// so client_delays warns: its figures cannot be told from its client's.
func (p *part) certificate(sc *result.Scenario, tool string) {
	ps := subject.Params(p.params)
	open := false
	for _, k := range []string{"request_rate", "rate", "rate_qps"} {
		if r := ps.Float(k, math.NaN()); r > 0 && !math.IsInf(r, 0) {
			open = true
		}
	}
	target := 0
	for _, k := range []string{"max_concurrency", "concurrency"} {
		if c := ps.Int(k, 0); c > 0 {
			target = c
			break
		}
	}
	ev := certify.EvidenceOf(p.figs, open, target, p.measured > 0)
	c := certify.Scenario(sc, ev)
	for i, k := range c.Checks {
		if k.Name == "client_delays" && k.Verdict == result.CertNone {
			c.Checks[i] = result.CertCheck{Name: k.Name, Verdict: result.CertWarn,
				Figure: fmt.Sprintf("%s records none of its client's own delays (schedule lag, send and read delay): its figures cannot be told from its client's", tool),
				Hint:   "measure the same server with inferbench run --openai URL, whose client is certified; docs/certificate.md"}
		}
	}
	sc.Extra.Certificate = result.NewCertificate(c.Checks)
}
