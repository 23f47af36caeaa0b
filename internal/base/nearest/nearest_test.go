package nearest

import "testing"

func TestName(t *testing.T) {
	names := []string{"latency_ms", "peak_rss_mb", "batch_size"}
	for _, tc := range []struct{ in, want string }{
		{"latency", "latency_ms"},    // a shortening
		{"batchsize", "batch_size"},  // a typo
		{"LATENCY_MS", "latency_ms"}, // case ignored
		{"throughput", ""},           // nothing near
	} {
		if got := Name(tc.in, names); got != tc.want {
			t.Errorf("Name(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
