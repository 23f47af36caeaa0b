package run

import (
	"os"

	"github.com/inferbench/inferbench/redact"
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

// learnSecrets adds the secrets the selected subjects' configurations name (an API key's
// environment variable), read from the run's environment and the process's, which subjects
// may read.
func (p *pipeline) learnSecrets(scenarios []*suite.Scenario) {
	var names []string
	seen := map[*suite.Benchmark]bool{}
	for _, sc := range scenarios {
		if seen[sc.Benchmark] {
			continue
		}
		seen[sc.Benchmark] = true
		if s, ok := sc.Benchmark.Config.(interface{ SecretEnv() []string }); ok {
			names = append(names, s.SecretEnv()...)
		}
	}
	if len(names) > 0 {
		p.red.Env(p.o.Env, names...)
		p.red.Env(os.Environ(), names...)
	}
}
