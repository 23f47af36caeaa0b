package tracing

import "testing"

// TestEnvEndpoint: the endpoint comes from the environment the run is given, as the
// specification defines it (the exporter read only the process's own environment, so a run
// given OTEL_EXPORTER_OTLP_ENDPOINT through run.Env or the CLI's IO exported nothing).
func TestEnvEndpoint(t *testing.T) {
	for _, tc := range []struct {
		env        map[string]string
		want, name string
	}{
		{nil, "", ""},
		// a base URL gets the traces path, with or without a trailing slash
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, "http://c:4318/v1/traces", "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/otlp/"}, "http://c:4318/otlp/v1/traces", "OTEL_EXPORTER_OTLP_ENDPOINT"},
		// the signal's own variable is used as given, and wins
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:1/x"}, "http://t:1/x", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
	} {
		got, name := EnvEndpoint(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		if got != tc.want || name != tc.name {
			t.Errorf("%v: %q from %q, want %q from %q", tc.env, got, name, tc.want, tc.name)
		}
	}
}
