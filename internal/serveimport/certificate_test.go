package serveimport

import (
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// TestImportCertified: an imported serving scenario carries a certificate as a run's own does,
// its checks read from the requests the file kept, and client_delays warns naming the tool,
// which measured none of its client's delays. Before, imports had no certificate.
func TestImportCertified(t *testing.T) {
	for _, tc := range []struct {
		file, tool string
		requests   bool // the file keeps each request: the samples check reads them
	}{
		{"vllm/detailed.json", "vllm", true},
		{"aiperf/profile_export.jsonl", "aiperf", true},
		{"guidellm/benchmarks.json", "guidellm", true},
		{"vllm/aggregate.json", "vllm", false},
		{"llm-d/vllm_br0.2.yaml", "llm-d", false},
	} {
		f := importFixture(t, tc.file)
		c := f.sc.Extra.Certificate
		if c == nil {
			t.Errorf("%s: no certificate", tc.file)
			continue
		}
		checks := map[string]result.CertCheck{}
		for _, k := range c.Checks {
			checks[k.Name] = k
		}
		cd := checks["client_delays"]
		if cd.Verdict != result.CertWarn || !strings.Contains(cd.Figure, "records none of its client's own delays") {
			t.Errorf("%s: client_delays %+v, want a warning that the tool measured none", tc.file, cd)
		}
		if c.Verdict == result.CertPass {
			t.Errorf("%s: certificate passes, though the client was not checked", tc.file)
		}
		if s := checks["samples"]; tc.requests && s.Verdict == result.CertNone {
			t.Errorf("%s: samples not judged from the file's requests: %+v", tc.file, s)
		}
	}
}
