package result

import (
	"fmt"
	"math"
)

// Bounds on values that come from outside inferbench (imported files, a subject's own figures, a
// server's usage report). Beyond them a value is a bug or a hostile input, not a measurement.
const (
	// MaxMillis bounds a time: one year, in milliseconds.
	MaxMillis = 365 * 24 * 3600 * 1e3
	// MaxTokens bounds a token count of one request.
	MaxTokens = 1e8
)

// CheckValue reports a value that cannot be a measurement of the metric name: NaN or infinite
// always; for a metric with a unit (every catalogued one, and names ending in _ms, _s, _mb,
// _per_s, _percent), a negative value, unless the metric is a change or a difference
// (Info.Signed: rss_growth_mb, overhead_percent; see signedName); a time over MaxMillis or a
// token count over MaxTokens. Metrics without a unit (a subject's own figures) may be negative.
func CheckValue(name string, v float64) error {
	info, _ := Lookup(name)
	return checkValue(name, info, v)
}

// checkValue is CheckValue with the metric's catalogue entry looked up once for all its values.
func checkValue(name string, info Info, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s = %v is not a finite number", name, v)
	}
	if info.Unit == "" {
		return nil
	}
	if v < 0 && !info.Signed {
		return fmt.Errorf("%s = %v: a value in %s cannot be negative", name, v, info.Unit)
	}
	switch {
	case info.Unit == "ms" && v > MaxMillis, info.Unit == "s" && v*1e3 > MaxMillis:
		return fmt.Errorf("%s = %v %s: over a year, not a plausible time", name, v, info.Unit)
	case info.Unit == "tokens" && v > MaxTokens:
		return fmt.Errorf("%s = %v: over %.0f tokens in one request, not a plausible count", name, v, float64(MaxTokens))
	}
	return nil
}

// CheckValues reports the first value of r's metrics (values, summaries and samples) that
// CheckValue refuses, naming the scenario and the metric. Importers call it so that an outside
// file's NaN or negative time never reaches a summary or a verdict.
func (r *Run) CheckValues() error {
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		for name, m := range s.Metrics {
			if err := m.check(name); err != nil {
				return fmt.Errorf("scenario %s: %w", s.ID(), err)
			}
		}
	}
	return nil
}

func (m Metric) check(name string) error {
	info, _ := Lookup(name)
	if m.Value != nil {
		if err := checkValue(name, info, *m.Value); err != nil {
			return err
		}
	}
	if s := m.Summary; s != nil {
		if s.N < 0 {
			return fmt.Errorf("%s: %d samples", name, s.N)
		}
		for _, v := range []float64{s.Mean, s.Min, s.Max, s.Median, s.P25, s.P75, s.P90, s.P95, s.P99} {
			if err := checkValue(name, info, v); err != nil {
				return err
			}
		}
		if math.IsNaN(s.Std) || math.IsInf(s.Std, 0) || s.Std < 0 {
			return fmt.Errorf("%s: standard deviation %v", name, s.Std)
		}
	}
	for j, v := range m.Samples {
		if err := checkValue(name, info, v); err != nil {
			return fmt.Errorf("sample %d: %w", j+1, err)
		}
	}
	return nil
}
