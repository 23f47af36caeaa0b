package exec

import (
	"bytes"
	"math"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// FuzzLastLineJSON feeds arbitrary output to the `metrics: json` reader of a command's stdout:
// no panic, and what it accepts came from a JSON object on the last line: finite values under
// non-empty names, declarations only for those names, each with a direction that parses.
func FuzzLastLineJSON(f *testing.F) {
	for _, s := range []string{
		"warming up\n{\"latency_ms\": 12.5, \"items\": 8}\n", `{"throughput": {"value": 1000, "unit": "items/s", "better": "higher"}}`,
		`{"x": {"value": "1"}}`, `{"x": {"value": 1, "better": "up"}}`, "{}\r\n\n", "null", "[1]", `{"": 5}`, `{"a": true, "b": "s", "c": [1]}`,
		"{\"a\": 1}\nnot json", "{\"a\": 1e400}", "", "\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		vals, decls, err := lastLineJSON(out)
		if err != nil {
			return
		}
		last := bytes.TrimSpace(out)
		if i := bytes.LastIndexByte(last, '\n'); i >= 0 {
			last = bytes.TrimSpace(last[i+1:])
		}
		if len(last) == 0 || last[0] != '{' {
			t.Fatalf("accepted a last line %q that is no JSON object", last)
		}
		for k, v := range vals {
			if k == "" || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("accepted %q = %v", k, v)
			}
		}
		for k, d := range decls {
			if _, ok := vals[k]; !ok {
				t.Fatalf("a declaration of %q without its value", k)
			}
			if d.Better != "" {
				if _, err := result.ParseDirection(d.Better); err != nil {
					t.Fatalf("%q: accepted better %q", k, d.Better)
				}
			}
		}
	})
}
