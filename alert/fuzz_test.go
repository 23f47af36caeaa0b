package alert

import (
	"math"
	"testing"
)

// FuzzParse checks the alert-rule parser on arbitrary text: no panic, and a rule it accepts has
// an operator, a metric and finite numbers (a NaN threshold would never fire: a silent pass).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"latency_ms.p95 > baseline * 1.3", "memory_mb.max > 2048", "growth(memory_mb, 7d) > 10%",
		"error_rate >= 0.01", "x < NaN", "x > baseline * Inf", "growth(m, 0d) > 5%", ">", "a > ", "growth(, ) > %"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		if r.Op == "" || r.Metric == "" {
			t.Fatalf("Parse(%q) = %+v: no operator or metric", s, r)
		}
		for _, v := range []float64{r.Value, r.Factor} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("Parse(%q) = %+v: a number that is not finite", s, r)
			}
		}
		if r.Growth < 0 {
			t.Fatalf("Parse(%q) = %+v: negative window", s, r)
		}
	})
}
