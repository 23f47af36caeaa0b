package openai

import "testing"

// TestMetricsURL: the Prometheus endpoint scraped beside a serving scenario.
func TestMetricsURL(t *testing.T) {
	for _, c := range []struct {
		url, metricsURL string
		want            string
		explicit        bool
	}{
		{"http://127.0.0.1:8000/v1", "", "http://127.0.0.1:8000/metrics", false},                             // vLLM, SGLang, llama.cpp: the root's /metrics
		{"http://127.0.0.1:8000/v1/", "", "http://127.0.0.1:8000/metrics", false},                            // a trailing slash
		{"http://host:8080", "", "http://host:8080/metrics", false},                                          // TGI's OpenAI route at the root
		{"https://gw.example/llm/v1?key=x#f", "", "https://gw.example/llm/metrics", false},                   // behind a path prefix; query and fragment dropped
		{"http://127.0.0.1:8000/v1", "http://127.0.0.1:9090/metrics", "http://127.0.0.1:9090/metrics", true}, // the definition's metrics_url
		{"http://127.0.0.1:8000/v1", "none", "", false},                                                      // scraping off
		{"http://127.0.0.1:8000/v1", "off", "", false},                                                       // the same
	} {
		s := &Subject{cfg: Config{URL: c.url, MetricsURL: c.metricsURL}}
		got, explicit := s.MetricsURL()
		if got != c.want || explicit != c.explicit {
			t.Errorf("url %q, metrics_url %q: MetricsURL() = %q, %v; want %q, %v", c.url, c.metricsURL, got, explicit, c.want, c.explicit)
		}
	}
}
