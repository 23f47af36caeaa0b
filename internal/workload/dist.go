package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Dist is a seeded random distribution of non-negative values: token lengths, or durations in
// milliseconds (the mockserver's TTFT and inter-token gap). The zero Dist always yields 0.
//
// Its text form, accepted by ParseDist, by flags and by definitions, is one of
//
//	128                              fixed value
//	fixed(128)                       fixed value
//	uniform(64, 256)                 uniform between min and max
//	normal(mean=128, std=32)         normal, clamped at 0 (and at min, max when given)
//	lognormal(mean=128, std=64)      lognormal with that mean and standard deviation
//
// Arguments are positional (in the order shown) or named; min and max may be added to any kind to
// clamp it: normal(128, 32, min=1, max=512).
type Dist struct {
	Kind  string  // "fixed", "uniform", "normal", "lognormal"; "" is fixed
	Value float64 // fixed value
	Mean  float64 // normal, lognormal
	Std   float64 // normal, lognormal
	Min   float64 // uniform lower bound; a clamp for the others when Max > 0 or Min > 0
	Max   float64 // uniform upper bound; a clamp for the others when > 0
}

// Fixed returns a Dist that always yields v.
func Fixed(v float64) Dist { return Dist{Kind: "fixed", Value: v} }

// ParseDist parses the text form described on Dist.
func ParseDist(s string) (Dist, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Dist{}, fmt.Errorf("empty distribution (want e.g. 128, uniform(64,256) or lognormal(mean=128,std=64))")
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		d := Fixed(v)
		return d, d.Validate()
	}
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return Dist{}, fmt.Errorf("distribution %q: want kind(args), e.g. normal(mean=128,std=32)", s)
	}
	d := Dist{Kind: strings.ToLower(strings.TrimSpace(s[:open]))}
	var positional []string
	switch d.Kind {
	case "fixed":
		positional = []string{"value"}
	case "uniform":
		positional = []string{"min", "max"}
	case "normal", "lognormal":
		positional = []string{"mean", "std"}
	default:
		return Dist{}, fmt.Errorf("distribution %q: unknown kind %q (want fixed, uniform, normal or lognormal)", s, d.Kind)
	}
	body := strings.TrimSpace(s[open+1 : len(s)-1])
	if body == "" {
		return Dist{}, fmt.Errorf("distribution %q: no arguments", s)
	}
	seen := map[string]bool{}
	for i, arg := range strings.Split(body, ",") {
		arg = strings.TrimSpace(arg)
		name, val, named := strings.Cut(arg, "=")
		if !named {
			if i >= len(positional) {
				return Dist{}, fmt.Errorf("distribution %q: too many positional arguments (name them: min=, max=)", s)
			}
			name, val = positional[i], arg
		}
		name = strings.ToLower(strings.TrimSpace(name))
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return Dist{}, fmt.Errorf("distribution %q: argument %q is not a number", s, arg)
		}
		if seen[name] {
			return Dist{}, fmt.Errorf("distribution %q: %s given twice", s, name)
		}
		seen[name] = true
		switch name {
		case "value":
			d.Value = v
		case "mean":
			d.Mean = v
		case "std":
			d.Std = v
		case "min":
			d.Min = v
		case "max":
			d.Max = v
		default:
			return Dist{}, fmt.Errorf("distribution %q: unknown argument %q (want value, mean, std, min or max)", s, name)
		}
	}
	return d, d.Validate()
}

// MaxValue bounds a distribution's arguments and samples: far above any token count or time in
// seconds a workload uses, and small enough that sampling stays finite.
const MaxValue = 1e9

// Validate reports a Dist that cannot be sampled.
func (d Dist) Validate() error {
	for _, v := range []float64{d.Value, d.Mean, d.Std, d.Min, d.Max} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("distribution %s: arguments must be finite and non-negative", d)
		}
		if v > MaxValue {
			return fmt.Errorf("distribution %s: arguments must be at most %g (token counts, seconds)", d, float64(MaxValue))
		}
	}
	if d.Max > 0 && d.Min > d.Max {
		return fmt.Errorf("distribution %s: min is above max", d)
	}
	switch d.Kind {
	case "", "fixed":
	case "uniform":
		if d.Max == 0 && d.Min > 0 {
			return fmt.Errorf("distribution %s: uniform needs max", d)
		}
	case "normal":
	case "lognormal":
		if d.Mean == 0 && d.Std > 0 {
			return fmt.Errorf("distribution %s: lognormal needs a mean above 0", d)
		}
	default:
		return fmt.Errorf("distribution kind %q unknown (want fixed, uniform, normal or lognormal)", d.Kind)
	}
	return nil
}

// String returns the text form of d, which ParseDist reads back.
func (d Dist) String() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	clamp := ""
	if d.Min > 0 {
		clamp += ",min=" + f(d.Min)
	}
	if d.Max > 0 {
		clamp += ",max=" + f(d.Max)
	}
	switch d.Kind {
	case "", "fixed":
		return "fixed(" + f(d.Value) + ")"
	case "uniform":
		return "uniform(" + f(d.Min) + "," + f(d.Max) + ")"
	default:
		return d.Kind + "(mean=" + f(d.Mean) + ",std=" + f(d.Std) + clamp + ")"
	}
}

// MarshalText implements encoding.TextMarshaler with the text form.
func (d Dist) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseDist, so a Dist decodes from a
// YAML or JSON string.
func (d *Dist) UnmarshalText(b []byte) error {
	v, err := ParseDist(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// IsZero reports whether d always yields 0.
func (d Dist) IsZero() bool { return d == Dist{} || (d.Kind == "fixed" && d.Value == 0) }

// Sample draws one value from d using r.
func (d Dist) Sample(r *rand.Rand) float64 {
	var v float64
	switch d.Kind {
	case "", "fixed":
		return d.Value
	case "uniform":
		return d.Min + r.Float64()*(d.Max-d.Min)
	case "normal":
		v = d.Mean + d.Std*r.NormFloat64()
	case "lognormal":
		if d.Mean <= 0 {
			return 0
		}
		// Parameters of the underlying normal for the requested mean and standard deviation.
		s2 := math.Log1p(d.Std * d.Std / (d.Mean * d.Mean))
		v = math.Exp(math.Log(d.Mean) - s2/2 + math.Sqrt(s2)*r.NormFloat64())
	}
	if math.IsNaN(v) { // a lognormal whose std dwarfs its mean
		v = d.Mean
	}
	v = min(max(v, d.Min, 0), MaxValue)
	if d.Max > 0 {
		v = min(v, d.Max)
	}
	return v
}

// Int draws one value from d rounded to the nearest integer.
func (d Dist) Int(r *rand.Rand) int { return int(math.Round(d.Sample(r))) }

// Expected returns the expected value of d before clamping (exact for fixed and uniform).
func (d Dist) Expected() float64 {
	switch d.Kind {
	case "", "fixed":
		return d.Value
	case "uniform":
		return (d.Min + d.Max) / 2
	}
	return d.Mean
}
