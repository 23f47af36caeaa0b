package run

import (
	"os"
	"slices"
	"strings"

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

// learnSecrets adds the secrets the selected benchmarks' definitions hold or name (Secrets). This
// is where a definition's data enters the run: everything written after it is redacted.
// A scenario's name is masked too: a matrix value or --set equal to a secret (--set
// model_id=$HF_TOKEN) names the scenario, and the name is on the console, in the spans and in
// every file; the scenario's parameters keep the value, for the subject.
func (p *pipeline) learnSecrets(scenarios []*suite.Scenario) {
	p.red.Add(Secrets(p.o.Env, scenarios)...)
	for _, sc := range scenarios {
		sc.Name = p.red.String(sc.Name)
	}
}

// Secrets returns the secrets the scenarios' definitions hold or name, for a run's redactor or an
// A/B's (internal/cli/ab): what a subject's configuration holds itself (an openai subject's header
// values, a URL's password, the values of env: variables whose names say secret), a
// secret-named parameter's value (hf_token, from --set too), the secret env: values of a server
// the benchmark starts, and the values of the environment variables a configuration names (an
// API key's) with, when it names any, those whose names say secret, read from env (the
// environment the subjects run with) and the process's, which subjects may read.
func Secrets(env []string, scenarios []*suite.Scenario) []string {
	var out, names []string
	seen := map[*suite.Benchmark]bool{}
	for _, sc := range scenarios {
		for k, v := range sc.Params {
			if s, ok := v.(string); ok && redact.SecretName(k) {
				out = append(out, s)
			}
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
			out = append(out, s.Secrets()...)
		}
		if b.Server != nil {
			out = append(out, b.Server.Secrets()...)
		}
	}
	if len(names) > 0 {
		for _, kv := range slices.Concat(env, os.Environ()) {
			if k, v, ok := strings.Cut(kv, "="); ok && (redact.SecretEnv(k) || slices.Contains(names, k)) {
				out = append(out, v)
			}
		}
	}
	return out
}
