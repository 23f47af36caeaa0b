package sample

import (
	"context"
	"fmt"

	"github.com/inferbench/inferbench/internal/monitor"
	"github.com/inferbench/inferbench/internal/monitor/scrape"
	"github.com/inferbench/inferbench/subject"
)

// metricsEndpoint is a serving subject whose server has a Prometheus endpoint (subject/openai).
type metricsEndpoint interface {
	MetricsURL() (url string, explicit bool)
}

// serverSamplers returns the sampler of the subject's server metrics endpoint, when it has one
// that answers with a known server's metrics, and a warning when an endpoint the definition
// named does not.
func serverSamplers(ctx context.Context, s subject.Subject) (opts []monitor.Option, warning string) {
	e, ok := s.(metricsEndpoint)
	if !ok {
		return nil, ""
	}
	url, explicit := e.MetricsURL()
	if url == "" {
		return nil, ""
	}
	if _, err := scrape.Probe(ctx, url); err != nil {
		if explicit {
			return nil, fmt.Sprintf("server metrics not scraped: %v", err)
		}
		return nil, ""
	}
	return []monitor.Option{monitor.WithSamplers(scrape.New(url, 0))}, ""
}
