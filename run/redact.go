package run

import (
	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/internal/stage/secrets"
	"github.com/inferbench/inferbench/suite"
)

// newRedactor learns the secrets of the options, where they enter the run: the values of secret
// flags and URL passwords on the command line (o.Args is replaced by its redacted copy, which is
// what run.json's config.args records), Secrets, and the environment variables
// whose names say they are secret.
func newRedactor(o *Options) *redact.Redactor {
	red := redact.New(o.Secrets...)
	red.DeclareParams(o.SecretParams...)
	red.Env(o.Env)
	o.Args = red.Args(o.Args)
	return red
}

// learnSecrets adds the secrets the selected benchmarks' definitions hold or name (secrets.Of), and
// the values of the parameters declared secret (--secret-param). This
// is where a definition's data enters the run: everything written after it is redacted.
// A scenario's name is masked too: a matrix value or --set equal to a secret (--set
// model_id=$HF_TOKEN) names the scenario, and the name is on the console, in the spans and in
// every file; the scenario's parameters keep the value, for the subject.
func (p *pipeline) learnSecrets(scenarios []*suite.Scenario) {
	p.red.Add(secrets.Of(p.o.Env, scenarios)...)
	for _, sc := range scenarios {
		for k, v := range sc.Params {
			p.red.Learn(k, v) // a parameter declared secret (--secret-param)
		}
		sc.Name = p.red.String(sc.Name)
	}
}
