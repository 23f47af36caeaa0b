// Package secrets finds the secrets a selection of scenarios brings into a run with its
// definitions, so that the run's redactor (and an A/B's) hides them wherever it writes: the select
// stage is where a definition's data enters the run.
package secrets

import (
	"os"
	"slices"
	"strings"

	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/suite"
)

// Of returns the secrets the scenarios' definitions hold or name, for a run's redactor or an
// A/B's (internal/cli/ab): what a subject's configuration holds itself (an openai subject's header
// values, a URL's password, the values of env: variables whose names say secret), the secret
// env: values of a server the benchmark starts, and the values of the environment variables a
// configuration names (an API key's) with, when it names any, those whose names say secret, read
// from env (the environment the subjects run with) and the process's, which subjects may read.
// A parameter's value is not among them by its name (a pytest `key` is a unit's name): run
// learns those of the parameters declared secret (--secret-param).
func Of(env []string, scenarios []*suite.Scenario) []string {
	var out, names []string
	seen := map[*suite.Benchmark]bool{}
	for _, sc := range scenarios {
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
