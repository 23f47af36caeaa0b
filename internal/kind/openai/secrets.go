package openai

import (
	"net/url"

	"github.com/inferbench/inferbench/internal/redact"
)

// SecretEnv names the environment variables whose values are secrets: the API key's. A run
// redacts their values wherever they would be written (package redact).
func (c *Config) SecretEnv() []string {
	if c == nil || c.APIKeyEnv == "" {
		return nil
	}
	return []string{c.APIKeyEnv}
}

// Secrets returns the secrets the configuration holds itself: the values of its headers
// (redact.Headers: an X-Api-Key, an "Authorization: Token ..."), and the passwords of its URLs.
// A run redacts them wherever they would be written, a server's error body echoing them included.
func (c *Config) Secrets() []string {
	if c == nil {
		return nil
	}
	out := redact.Headers(c.Headers)
	for _, u := range []string{c.URL, c.MetricsURL} {
		if p, err := url.Parse(u); err == nil && p.User != nil {
			if pw, ok := p.User.Password(); ok {
				out = append(out, pw)
			}
		}
	}
	return out
}
