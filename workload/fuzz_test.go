package workload

import (
	"math"
	"math/rand/v2"
	"testing"
)

// FuzzParseDist checks the distribution parser on arbitrary text: no panic; what it accepts
// validates, prints as text that parses back to the same distribution, and samples finite,
// non-negative values.
func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"128", "uniform(64,256)", "normal(mean=128,std=32)", "lognormal(mean=128,std=64,max=512)",
		"fixed(3)", "uniform(min=1,max=1)", "normal(1)", "NaN", "1e308", "lognormal(mean=1e308,std=1e308)", "uniform(5,1)", "(", "x()"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDist(s)
		if err != nil {
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("ParseDist(%q) accepted %v, which Validate refuses: %v", s, d, err)
		}
		back, err := ParseDist(d.String())
		if err != nil || back != d {
			t.Fatalf("ParseDist(%q) = %+v; its text %q parses back to %+v, %v", s, d, d.String(), back, err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		for range 16 {
			if v := d.Sample(r); math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("%v sampled %v", d, v)
			}
		}
	})
}
