package monitor

import "github.com/inferbench/inferbench/result"

// WithSamplers adds samplers of the scenario's own to a Monitor, beside the run-wide ones (the
// serving subject's server metrics endpoint, package monitor/scrape).
func WithSamplers(s ...Sampler) Option {
	return func(m *Monitor) {
		for _, x := range s {
			if x != nil {
				m.samplers = append(m.samplers, x)
			}
		}
	}
}

// Explainer is an optional ability: a sampler that explains its window beyond the gauges (the
// GPU sampler's clock event reasons, clock ranges, processes and power cap). Explain fills its
// part of the window's details and returns warnings naming causes it saw, which join the
// window's warnings.
type Explainer interface {
	Explain(d *result.ResourceDetails) (warnings []string)
}

func (m *Monitor) explain(r *result.Resources) {
	var d result.ResourceDetails
	for _, s := range m.samplers {
		if e, ok := s.(Explainer); ok {
			r.Warnings = append(r.Warnings, e.Explain(&d)...)
		}
	}
	if d != (result.ResourceDetails{}) {
		r.Details = &d
	}
}
