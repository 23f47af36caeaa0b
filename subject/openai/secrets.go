package openai

// SecretEnv names the environment variables whose values are secrets: the API key's. A run
// redacts their values wherever they would be written (package redact).
func (c *Config) SecretEnv() []string {
	if c == nil || c.APIKeyEnv == "" {
		return nil
	}
	return []string{c.APIKeyEnv}
}
