package monitor

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
// GPU sampler's clock event reasons, clock ranges, processes and power cap). Explain returns a
// key, the detail kept under Report.Details[key], and warnings naming causes it saw, which join
// Report.Warnings.
type Explainer interface {
	Explain() (key string, detail any, warnings []string)
}

func (m *Monitor) explain(r *Report) {
	for _, s := range m.samplers {
		e, ok := s.(Explainer)
		if !ok {
			continue
		}
		key, detail, warnings := e.Explain()
		if detail != nil {
			if r.Details == nil {
				r.Details = map[string]any{}
			}
			r.Details[key] = detail
		}
		r.Warnings = append(r.Warnings, warnings...)
	}
}
