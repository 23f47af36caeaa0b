package cli

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/inferbench/inferbench/internal/testkit/otlptest"
)

// TestRunExportsOTLPFromEnvironment: with no --otlp-endpoint, the standard
// OTEL_EXPORTER_OTLP_ENDPOINT alone makes run export its spans (to the endpoint's /v1/traces,
// as the OpenTelemetry specification says for the base endpoint), to an OTLP receiver started
// by the test. It drives only the command line, whichever package sets tracing up.
func TestRunExportsOTLPFromEnvironment(t *testing.T) {
	rc, url := otlptest.Start(t)
	code, out, errOut := runCLI(t, "", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + url},
		"run", filepath.Join(testdata, "project"), "--enable-mock", "--output-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	reqs := rc.Requests()
	if len(reqs) == 0 || slices.ContainsFunc(reqs, func(r string) bool { return r != "POST /v1/traces" }) {
		t.Errorf("requests received %v, want POST /v1/traces only", reqs)
	}
	names := rc.Names()
	for _, want := range []string{"inferbench run", "scenario quick-mock/batch_size=1"} {
		if !slices.Contains(names, want) {
			t.Errorf("no span %q among %v", want, names)
		}
	}
}
