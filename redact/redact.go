// Package redact removes secrets from text before anything keeps it. A run learns its secrets
// where they enter (the command line, the environment, the subjects' configuration) into one
// Redactor, and the same Redactor cleans what enters from outside (server error bodies, process
// output) before any writer — run.json, run.log, requests/*.jsonl, report.html, the store,
// stdout and stderr — sees it.
//
// A Redactor hides two things: values it was told are secret (Add), and secrets recognisable by
// their shape wherever they come from: the password of a URL (scheme://user:PASSWORD@host), a
// bearer token, an OpenAI-style key (sk-...), and the value after api_key=, token:, password=,
// "authorization": and the like.
package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Mask replaces a secret.
const Mask = "xxxxx"

// MinSecret is the shortest value Add accepts: shorter ones would mask ordinary words.
const MinSecret = 6

// Redactor hides secrets in text. The zero value hides secrets by their shape only. It is safe
// for concurrent use.
type Redactor struct {
	mu      sync.RWMutex
	secrets []string // longest first, so that a secret containing another is masked whole
}

// New returns a Redactor that knows secrets.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add makes values secret (those shorter than MinSecret are ignored).
func (r *Redactor) Add(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if len(s) >= MinSecret && !slices.Contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	slices.SortFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
}

var (
	// scheme://user:password@ — the password goes.
	urlPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@]*):[^\s/@]*@`)
	// Bearer TOKEN; Authorization: Basic CREDENTIALS.
	bearer = regexp.MustCompile(`(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/\-]+=*`)
	basic  = regexp.MustCompile(`(?i)(authorization["']?\s*[:=]\s*["']?basic\s+)[A-Za-z0-9+/]+=*`)
	// OpenAI-style keys: sk-..., sk-proj-...
	skKey = regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{8,}`)
	// api_key=V, "token": "V", password: V, --metrics-token=V, x-api-key: V.
	keyValue = regexp.MustCompile(`(?i)((?:api[_\-]?key|access[_\-]?key|secret|token|passw(?:or)?d|authorization|credentials?)["']?\s*[:=]\s*["']?)([^\s"',;&}]+)`)
)

// String returns s with every secret masked.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	if r != nil {
		r.mu.RLock()
		for _, sec := range r.secrets {
			if strings.Contains(s, sec) {
				s = strings.ReplaceAll(s, sec, Mask)
			}
		}
		r.mu.RUnlock()
	}
	s = urlPassword.ReplaceAllString(s, "${1}:"+Mask+"@")
	s = bearer.ReplaceAllStringFunc(s, func(m string) string {
		sub := bearer.FindStringSubmatch(m)
		if strings.EqualFold(sub[0], sub[1]) || len(m)-len(sub[1])-len(sub[2]) < 8 {
			return m // "bearer token" in prose, not a credential
		}
		return sub[1] + sub[2] + Mask
	})
	s = basic.ReplaceAllString(s, "${1}"+Mask)
	s = skKey.ReplaceAllString(s, "sk-"+Mask)
	s = keyValue.ReplaceAllStringFunc(s, func(m string) string {
		sub := keyValue.FindStringSubmatch(m)
		if sub[2] == Mask || strings.HasPrefix(sub[2], "$") || strings.EqualFold(sub[2], "bearer") || strings.EqualFold(sub[2], "basic") {
			return m // already masked, a variable's name, or the scheme before a token masked above
		}
		return sub[1] + Mask
	})
	return s
}

// SecretFlag reports whether a command-line flag's value is a secret: a flag whose name says
// token, key, secret, password or credential (--metrics-token, --api-key).
func SecretFlag(name string) bool {
	name = strings.ToLower(strings.TrimLeft(name, "-"))
	if strings.HasSuffix(name, "-env") || strings.HasSuffix(name, "_env") {
		return false // names an environment variable, not the value
	}
	for _, w := range []string{"token", "key", "secret", "password", "passwd", "credential"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// Args returns a command line with the values of secret flags (SecretFlag) masked, remembering
// them as secrets, and every argument redacted (URL passwords and the like).
func (r *Redactor) Args(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			name, v, eq := strings.Cut(a, "=")
			if SecretFlag(name) {
				if eq {
					r.Add(v)
					out[i] = name + "=" + Mask
					continue
				}
				if i+1 < len(args) {
					r.Add(args[i+1])
					out[i], out[i+1] = a, Mask
					i++
					continue
				}
			}
		}
		out[i] = r.String(a)
	}
	return out
}

// SecretEnv reports whether an environment variable's name says it holds a secret
// (OPENAI_API_KEY, INFERBENCH_TOKEN, PGPASSWORD, a webhook URL).
func SecretEnv(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "WEBHOOK", "AUTH"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Env remembers the values of the variables (KEY=VALUE) whose names say they are secret, and
// of the variables named in names.
func (r *Redactor) Env(env []string, names ...string) {
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if ok && (SecretEnv(k) || slices.Contains(names, k)) {
			r.Add(v)
		}
	}
}

// Error returns err with its message redacted; errors.Is and errors.As still see the original
// chain. Nil stays nil.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := r.String(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redacted{msg, err}
}

type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }
