package launch

import "github.com/inferbench/inferbench/internal/redact"

// Secrets returns the values of the server's environment variables whose names say they are
// secret (HF_TOKEN): a run redacts them wherever they would be written, the server's log
// included.
func (c *Config) Secrets() []string {
	if c == nil {
		return nil
	}
	return redact.EnvValues(c.Env)
}
