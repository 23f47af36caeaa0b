package worker

import "github.com/inferbench/inferbench/internal/redact"

// Secrets returns the values of the configuration's environment variables whose names say they
// are secret (HF_TOKEN, API_KEY): a run redacts them wherever they would be written, the
// command's own output included.
func (c *Config) Secrets() []string {
	if c == nil {
		return nil
	}
	return redact.EnvValues(c.Env)
}
