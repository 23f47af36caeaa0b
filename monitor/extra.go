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
