package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/internal/testkit/otlptest"
)

// TestRunExportsOTLP: run --otlp-endpoint sends the run, its scenarios and their iterations as
// spans to an OTLP receiver started by the test (protobuf over HTTP, decoded here);
// --otlp-span-rate 0 leaves out the iterations.
func TestRunExportsOTLP(t *testing.T) {
	for _, tc := range []struct {
		rate string
		want []string
	}{
		{"1000", []string{"inferbench run", "iteration", "scenario gated/default", "scenario noop/default", "scenario quick-mock/batch_size=1", "scenario quick-mock/batch_size=2"}},
		{"0", []string{"inferbench run", "scenario gated/default", "scenario noop/default", "scenario quick-mock/batch_size=1", "scenario quick-mock/batch_size=2"}},
	} {
		rc, url := otlptest.Start(t)
		code, out, errOut := runCLI(t, "", nil, "run", filepath.Join(testdata, "project"), "--enable-mock",
			"--output-dir", t.TempDir(), "--otlp-endpoint", url+"/v1/traces", "--otlp-span-rate", tc.rate)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		if diff := cmp.Diff(tc.want, rc.Names()); diff != "" {
			t.Errorf("--otlp-span-rate %s: spans received (-want +got):\n%s", tc.rate, diff)
		}
	}
}

// TestRunTraceUsageErrors: a sampler the run cannot honour, or a negative span rate, is a usage
// error (exit 2) naming the variable or flag, before anything runs.
func TestRunTraceUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{"OTEL_TRACES_SAMPLER=jaeger_remote"}, nil, "OTEL_TRACES_SAMPLER"},                                   // not supported
		{[]string{"OTEL_TRACES_SAMPLER=traceidratio", "OTEL_TRACES_SAMPLER_ARG=1.5"}, nil, "OTEL_TRACES_SAMPLER_ARG"}, // out of range
		{nil, []string{"--otlp-span-rate", "-1"}, "--otlp-span-rate"},                                                 // negative
	} {
		args := append([]string{"run", filepath.Join(testdata, "project"), "--enable-mock", "--output-dir", t.TempDir(),
			"--otlp-endpoint", "http://127.0.0.1:1/v1/traces"}, tc.args...)
		code, out, errOut := runCLI(t, "", tc.env, args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want 2 and a message naming %s\n%s", tc.env, tc.args, code, errOut, tc.want, out)
		}
	}
}
