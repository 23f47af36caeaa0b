package run

import (
	"os"

	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/suite"
)

// newRedactor learns the secrets of the options, where they enter the run: the values of secret
// flags and URL passwords on the command line (o.Args is replaced by its redacted copy, which is
// what run.json's config.args records), Secrets, and the environment variables
// whose names say they are secret.
func newRedactor(o *Options) *redact.Redactor {
	red := redact.New(o.Secrets...)
	red.Env(o.Env)
	o.Args = red.Args(o.Args)
	return red
}

// learnSecrets adds the secrets the selected benchmarks' definitions hold or name: what a subject's
// configuration holds itself (an openai subject's header values, a URL's password, the values
// of env: variables whose names say secret) and the values of the environment variables it
// names (an API key's), read from the run's environment and the process's, which subjects may
// read; and the secret env: values of a server the benchmark starts. This is where a
// definition's data enters the run: everything written after it is redacted.
func (p *pipeline) learnSecrets(scenarios []*suite.Scenario) {
	LearnSecrets(p.red, p.o.Env, scenarios)
}

// LearnSecrets is learnSecrets for any redactor: a run's, or an A/B's (internal/ab); env is the
// environment the subjects run with.
func LearnSecrets(red *redact.Redactor, env []string, scenarios []*suite.Scenario) {
	var names []string
	seen := map[*suite.Benchmark]bool{}
	for _, sc := range scenarios {
		for k, v := range sc.Params { // a secret-named parameter's value: hf_token, from --set too
			red.Learn(k, v)
		}
		b := sc.Benchmark
		if seen[b] {
			continue
		}
		seen[b] = true
		if s, ok := b.Config.(interface{ SecretEnv() []string }); ok {
			names = append(names, s.SecretEnv()...)
		}
		if s, ok := b.Config.(interface{ Secrets() []string }); ok {
			red.Add(s.Secrets()...)
		}
		if b.Server != nil {
			red.Add(b.Server.Secrets()...)
		}
	}
	if len(names) > 0 {
		red.Env(env, names...)
		red.Env(os.Environ(), names...)
	}
}
