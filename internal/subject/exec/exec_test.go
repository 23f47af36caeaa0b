package exec

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/subject"
)

// TestMetricsItems checks the item count a command reports on its last line: a negative,
// fractional or absurd count is an error naming it, not a number of items (int(-1e300) is
// whatever the platform makes of it).
func TestMetricsItems(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, tc := range []struct{ line, want string }{
		{`{"items": 4, "latency_ms": 2}`, ""},
		{`{"items": -1}`, "items = -1 is not a count"},
		{`{"items": 2.5}`, "items = 2.5 is not a count"},
		{`{"items": 1e300}`, "items = 1e+300 is not a count"},
	} {
		s, err := Open(context.Background(), subject.Spec{Config: &Config{Command: []any{"sh", "-c", "echo '" + tc.line + "'"}, Metrics: "json"}})
		if err != nil {
			t.Fatal(err)
		}
		o, err := s.Do(context.Background(), subject.Request{})
		if tc.want == "" {
			if err != nil || o.Items != 4 {
				t.Errorf("%s: items %d, err %v", tc.line, o.Items, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.line, err, tc.want)
		}
	}
}
