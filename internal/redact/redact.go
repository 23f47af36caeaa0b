// Package redact removes secrets from text before anything keeps it. A run learns its secrets
// where they enter (the command line, the environment, the subjects' configuration) into one
// Redactor, and the same Redactor cleans what enters from outside (server error bodies, process
// output) before any writer — run.json, run.log, requests/*.jsonl, report.html, the store,
// stdout and stderr — sees it.
//
// A Redactor hides two things: values it was told are secret (Add), and secrets recognisable by
// their shape wherever they come from: the password of a URL (scheme://user:PASSWORD@host), a
// bearer token, the credential of an Authorization header of any common scheme (Basic, Token,
// ApiKey, ...), a "Token CREDENTIAL" or "ApiKey CREDENTIAL" anywhere, an OpenAI-style key
// (sk-...), and the value after api_key=, x-api-key:, token:, password=, "authorization": and the
// like.
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
	params  []string // parameter names the user declared secret (DeclareParams)
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
	// Bearer TOKEN; Token CREDENTIAL, ApiKey CREDENTIAL (masked when the credential has a letter
	// and a digit, so that "token generation" stays); Authorization: SCHEME CREDENTIALS for the
	// common schemes.
	bearer = regexp.MustCompile(`(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/\-]+=*`)
	scheme = regexp.MustCompile(`(?i)\b(token|api[_\-]?key)(\s+)([A-Za-z0-9._~+/\-]{8,}=*)`)
	basic  = regexp.MustCompile(`(?i)(authorization["']?\s*[:=]\s*["']?` + authSchemes + `\s+)[A-Za-z0-9._~+/\-]+=*`)
	// OpenAI-style keys: sk-..., sk-proj-...
	skKey = regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{8,}`)
	// api_key=V, "token": "V", password: V, --metrics-token=V, x-api-key: V.
	keyValue = regexp.MustCompile(`(?i)((?:api[_\-]?key|access[_\-]?key|secret|token|passw(?:or)?d|authorization|credentials?)["']?\s*[:=]\s*["']?)([^\s"',;&}]+)`)
)

// authSchemes are the schemes of an Authorization header whose credential follows them.
const authSchemes = `(?:basic|bearer|token|api[_\-]?key|key|digest|negotiate|ntlm|sso-key)`

// isScheme reports whether v is one of authSchemes: the value keyValue finds after
// "Authorization:", whose credential basic masked.
func isScheme(v string) bool {
	switch strings.ToLower(v) {
	case "basic", "bearer", "token", "apikey", "api_key", "api-key", "key", "digest", "negotiate", "ntlm", "sso-key":
		return true
	}
	return false
}

// String returns s with every secret masked.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	c := r.candidates(s)
	if c == 0 {
		return s
	}
	return r.mask(s, c)
}

// shapes is a set of what String looks for.
type shapes uint8

const (
	knownSecret shapes = 1 << iota // a value given to Add
	urlShape                       // scheme://user:password@
	bearerShape                    // Bearer TOKEN
	schemeShape                    // Token CREDENTIAL, ApiKey CREDENTIAL
	skShape                        // sk-...
	keyShape                       // api_key=V and the like; Authorization: Basic V
	allShapes   = knownSecret | urlShape | bearerShape | schemeShape | skShape | keyShape
)

// mask masks in s the secrets of the shapes in c: the known secrets, then each shape's
// expression.
func (r *Redactor) mask(s string, c shapes) string {
	if r != nil && c&knownSecret != 0 {
		r.mu.RLock()
		for _, sec := range r.secrets {
			if strings.Contains(s, sec) {
				s = strings.ReplaceAll(s, sec, Mask)
			}
		}
		r.mu.RUnlock()
	}
	if c&urlShape != 0 {
		s = urlPassword.ReplaceAllString(s, "${1}:"+Mask+"@")
	}
	if c&bearerShape != 0 {
		s = bearer.ReplaceAllStringFunc(s, func(m string) string {
			sub := bearer.FindStringSubmatch(m)
			if strings.EqualFold(sub[0], sub[1]) || len(m)-len(sub[1])-len(sub[2]) < 8 {
				return m // "bearer token" in prose, not a credential
			}
			return sub[1] + sub[2] + Mask
		})
	}
	if c&schemeShape != 0 {
		s = scheme.ReplaceAllStringFunc(s, func(m string) string {
			sub := scheme.FindStringSubmatch(m)
			if !strings.ContainsAny(sub[3], "0123456789") || !strings.ContainsFunc(sub[3], isLetter) {
				return m // "token generation", "token 12345678": prose and numbers, not a credential
			}
			return sub[1] + sub[2] + Mask
		})
	}
	if c&keyShape != 0 {
		s = basic.ReplaceAllString(s, "${1}"+Mask)
	}
	if c&skShape != 0 {
		s = skKey.ReplaceAllString(s, "sk-"+Mask)
	}
	if c&keyShape != 0 {
		s = keyValue.ReplaceAllStringFunc(s, func(m string) string {
			sub := keyValue.FindStringSubmatch(m)
			if sub[2] == Mask || strings.HasPrefix(sub[2], "$") || isScheme(sub[2]) {
				return m // already masked, a variable's name, or the scheme before a credential masked above
			}
			return sub[1] + Mask
		})
	}
	return s
}

// isLetter reports whether r is an ASCII letter.
func isLetter(r rune) bool { return r|0x20 >= 'a' && r|0x20 <= 'z' }

// candidates is the set of shapes s may hold: a known secret it contains, and each shape whose
// expression s has what it needs to match (a "://" and an "@"; "bearer"; "token" or "key" before
// a space; "sk-"; a ':' or '=' right after one of the key words, in any case). It lets text with no candidate (most process output)
// pass without the regular expressions, which cost about 20 µs per line of 100 bytes, and runs
// only the expressions that can match. What it leaves out, the expression would have left alone
// (TestCandidatesAreExact, FuzzCandidates); a mask inserted never makes a new candidate, as
// Mask holds none of these letters or signs.
func (r *Redactor) candidates(s string) shapes {
	var c shapes
	if r != nil {
		r.mu.RLock()
		for _, sec := range r.secrets {
			if strings.Contains(s, sec) {
				c |= knownSecret
				break
			}
		}
		r.mu.RUnlock()
	}
	if strings.Contains(s, "sk-") {
		c |= skShape
	}
	if strings.Contains(s, "://") && strings.IndexByte(s, '@') >= 0 {
		c |= urlShape
	}
	// The expressions fold case the Unicode way: the Kelvin sign matches k, the long s matches s.
	if strings.Contains(s, "\u212a") || strings.Contains(s, "\u017f") {
		return allShapes
	}
	const words = bearerShape | schemeShape | keyShape
	for i := 0; i < len(s) && c&words != words; i++ {
		l := s[i] | 0x20 // ASCII letters in lower case; other bytes never start a word below
		if !wordStart[l] {
			continue
		}
		for _, w := range shapeWords {
			if w[0] != l || len(s)-i < len(w) || !strings.EqualFold(s[i:i+len(w)], w) {
				continue
			}
			if w == "bearer" {
				c |= bearerShape
				continue
			}
			if (w == "token" || w == "key") && i+len(w) < len(s) && isSpace(s[i+len(w)]) {
				c |= schemeShape
			}
			if keyFollows(s, i+len(w), w) {
				c |= keyShape
			}
		}
	}
	return c
}

// keyFollows reports whether what follows a key word w ending at j is what the key=value and
// Basic expressions need after it: the rest of the word (credential[s], passw[or]d), an optional
// quote, spaces, then ':' or '='. "prompt_tokens=12" has no candidate: the s comes between.
func keyFollows(s string, j int, w string) bool {
	switch w {
	case "credential":
		if j < len(s) && s[j]|0x20 == 's' {
			j++
		}
	case "passw":
		switch {
		case len(s)-j >= 3 && strings.EqualFold(s[j:j+3], "ord"):
			j += 3
		case j < len(s) && s[j]|0x20 == 'd':
			j++
		default:
			return false
		}
	}
	if j < len(s) && (s[j] == '"' || s[j] == '\'') {
		j++
	}
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	return j < len(s) && (s[j] == ':' || s[j] == '=')
}

// isSpace reports whether b is an ASCII space, as \s or unicode.IsSpace see it.
func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v'
}

// shapeWords are the words the shapes of secrets need: "bearer", and the key words that precede
// a ':' or '=' (api_key, access-key and x-api-key end in "key"; password and passwd start with
// "passw"; "authorization" precedes a Basic credential).
var shapeWords = []string{"bearer", "key", "secret", "token", "passw", "authorization", "credential"}

// wordStart marks the first letters of shapeWords.
var wordStart = func() (t [256]bool) {
	for _, w := range shapeWords {
		t[w[0]] = true
	}
	return t
}()

// SecretName reports whether a name (a flag's, a parameter's, a field's) says its value is a
// secret: its last word is key, credential or credentials, or ends in token, secret, password,
// passwd or apikey. Words are split at '-', '_', '.', spaces and a lower-case letter followed by
// an upper-case one: --metrics-token, --api-key, hf_token, access_token, client_secret,
// db_password, hfToken, apikey are secret. A word elsewhere in the name does not make it one:
// --num-tokens-to-generate, max_tokens, tokenizer, key_length and --api-key-env (it names an
// environment variable, not the value) are plain, and their values are written as given.
func SecretName(name string) bool {
	last := lastWord(strings.TrimLeft(name, "-"))
	switch last {
	case "key", "credential", "credentials":
		return true
	}
	for _, suffix := range []string{"token", "secret", "password", "passwd", "apikey"} {
		if strings.HasSuffix(last, suffix) {
			return true
		}
	}
	return false
}

// lastWord returns the last word of a name, in lower case (see SecretName).
func lastWord(name string) string {
	end := len(name)
	for end > 0 && strings.IndexByte("-_. ", name[end-1]) >= 0 {
		end--
	}
	start := end
	for start > 0 {
		c := name[start-1]
		if strings.IndexByte("-_. ", c) >= 0 {
			break
		}
		if start < end && c >= 'a' && c <= 'z' && name[start] >= 'A' && name[start] <= 'Z' {
			break // hfToken: the word starts at T
		}
		start--
	}
	return strings.ToLower(name[start:end])
}

// SecretFlag reports whether a command-line flag's value is a secret: a flag whose name is
// secret (SecretName: --metrics-token, --api-key; not --num-tokens-to-generate).
func SecretFlag(name string) bool { return SecretName(name) }

// setFlags are the flags whose value is KEY=VALUE, a parameter: the value of a secret KEY
// (--set hf_token=...) is a secret.
var setFlags = []string{"--set"}

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
			if slices.Contains(setFlags, name) {
				// --set KEY=VALUE (or --set=KEY=VALUE): the parameter's name decides.
				kv, j := v, i
				if !eq && i+1 < len(args) {
					kv, j = args[i+1], i+1
				}
				if k, pv, ok := strings.Cut(kv, "="); ok && SecretName(k) {
					r.Add(pv)
					if j == i {
						out[i] = name + "=" + k + "=" + Mask
					} else {
						out[i], out[j] = a, k+"="+Mask
					}
					i = j
					continue
				}
			}
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

// Masker masks the secrets in text: a *Redactor, or a public package's own interface of the
// same method (engine.Redactor, serverproc.Redactor) through which a caller hands one in. The
// helpers of this package take a Masker; Params learns secrets, and a Writer screens whole chunks
// at once, when it is a *Redactor.
type Masker interface {
	String(s string) string
}

var _ Masker = (*Redactor)(nil)

// Error returns err with its message redacted; errors.Is and errors.As still see the original
// chain. Nil stays nil.
func (r *Redactor) Error(err error) error { return Err(r, err) }

// Err is Redactor.Error through any Masker.
func Err(m Masker, err error) error {
	if err == nil {
		return nil
	}
	msg := m.String(err.Error())
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

// Headers returns the values of HTTP headers a definition sets that are to be kept secret, for
// Add: every header's but those of content negotiation and connection handling (Content-Type,
// Accept, User-Agent and the like), which hold no credential. A header's name does not say
// whether its value is secret (X-Api-Key, X-Goog-Api-Key, Cookie, a vendor's own), so any other
// is. A value "SCHEME CREDENTIAL" (Authorization: Token abc) gives the credential too, which a
// server may echo alone.
func Headers(h map[string]string) []string {
	var out []string
	for k, v := range h {
		if plainHeader(k) {
			continue
		}
		v = strings.TrimSpace(v)
		out = append(out, v)
		if sch, cred, ok := strings.Cut(v, " "); ok && strings.IndexFunc(sch, func(r rune) bool { return !isLetter(r) && r != '-' && r != '_' }) < 0 {
			out = append(out, strings.TrimSpace(cred))
		}
	}
	slices.Sort(out)
	return out
}

// plainHeader reports whether a header never carries a credential.
func plainHeader(name string) bool {
	name = strings.ToLower(name)
	if strings.HasPrefix(name, "accept") || strings.HasPrefix(name, "content-") {
		return true
	}
	switch name {
	case "user-agent", "cache-control", "connection", "pragma", "x-request-id", "x-idempotency-key", "openai-beta", "anthropic-version":
		return true
	}
	return false
}

// EnvValues returns the values of the variables of env whose names say they are secret
// (SecretEnv), for Add: a definition's `env: {HF_TOKEN: ...}`.
func EnvValues(env map[string]string) []string {
	var out []string
	for k, v := range env {
		if SecretEnv(k) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// CredentialHeader reports whether a request header may carry a credential: every header but
// those of content negotiation and connection handling (Content-Type, Accept*, User-Agent and
// the like), as Headers decides which values are secrets. A header's name does not say whether
// it holds a credential (X-Api-Key, X-Org-Secret, a gateway's own), so none but those is trusted.
func CredentialHeader(name string) bool { return !plainHeader(name) }
