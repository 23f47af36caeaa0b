package quick

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSLOs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		specs []string
		want  map[string]float64
		err   string
	}{
		{"none", nil, nil, ""},
		{"two, one with <=", []string{"ttft_ms.p99=500", "tpot_ms.p50 = <= 20"}, map[string]float64{"ttft_ms.p99": 500, "tpot_ms.p50": 20}, ""},
		{"no limit", []string{"ttft_ms.p99"}, nil, `--slo "ttft_ms.p99": want metric.stat=limit`},
		{"unknown metric", []string{"bogus.p99=1"}, nil, "--slo:"},
	} {
		got, err := ParseSLOs(tc.specs)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}
