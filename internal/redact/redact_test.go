package redact

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	r := New("s3cr3t-token-value")
	cases := []struct{ in, want string }{
		// A URL's password, in any scheme.
		{"GET http://user:pa55w0rd@host:8000/v1/models", "GET http://user:xxxxx@host:8000/v1/models"},
		{"store postgres://u:p@db/x failed", "store postgres://u:xxxxx@db/x failed"},
		// A user without a password is no secret.
		{"http://user@host/", "http://user@host/"},
		// Bearer tokens and OpenAI-style keys echoed by a server.
		{`401: {"error": "Incorrect API key provided: sk-proj-abcdef123456"}`, `401: {"error": "Incorrect API key provided: sk-xxxxx"}`},
		{"Authorization: Bearer abcdefgh12345678", "Authorization: Bearer xxxxx"},
		{"Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic xxxxx"},
		// Other schemes of an Authorization header, with the scheme kept (before, "Token" was
		// masked and the credential after it kept).
		{"Authorization: Token AuTh7766zzqq", "Authorization: Token xxxxx"},
		{`{"authorization": "ApiKey abcdefghij"}`, `{"authorization": "ApiKey xxxxx"}`},
		{"authorization=Digest abc", "authorization=Digest xxxxx"},
		// Token and ApiKey credentials echoed anywhere; prose and numbers stay.
		{"invalid token AuTh7766zzqq for org", "invalid token xxxxx for org"},
		{"apikey 9f8e7d6c5b4a", "apikey xxxxx"},
		{"token generation took 120 ms; token 12345678", "token generation took 120 ms; token 12345678"},
		// key=value shapes, an x-api-key header among them.
		{"x-api-key: K3yValue9988xx", "x-api-key: xxxxx"},
		{`"X-Api-Key": "K3yValue9988xx"`, `"X-Api-Key": "xxxxx"`},
		{"api_key=abc123&x=1", "api_key=xxxxx&x=1"},
		{`{"password": "hunter2"}`, `{"password": "xxxxx"}`},
		// A known secret anywhere, e.g. a token echoed in an error body.
		{"unauthorized: got s3cr3t-token-value", "unauthorized: got xxxxx"},
		// Ordinary text stays.
		{"the bearer token is sent in a header; 3 of 5 failed", "the bearer token is sent in a header; 3 of 5 failed"},
		{"api_key_env: OPENAI_API_KEY", "api_key_env: OPENAI_API_KEY"},
	}
	for _, c := range cases {
		if got := r.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestArgs(t *testing.T) {
	r := New()
	got := r.Args([]string{"run", "--metrics-token", "tok-123456", "--api-key=k-abcdef", "--store", "postgres://u:pw@db/x", "--alert-webhook-env", "HOOK"})
	want := "run --metrics-token xxxxx --api-key=xxxxx --store postgres://u:xxxxx@db/x --alert-webhook-env HOOK"
	if strings.Join(got, " ") != want {
		t.Errorf("Args = %q, want %q", strings.Join(got, " "), want)
	}
	// The flag values are now known secrets.
	if s := r.String("echo tok-123456"); s != "echo xxxxx" {
		t.Errorf("a secret flag's value was not learned: %q", s)
	}
}

func TestEnvAndError(t *testing.T) {
	r := New()
	r.Env([]string{"OPENAI_API_KEY=key-from-env-1", "HOME=/root", "MY_VAR=value-named-1"}, "MY_VAR")
	err := r.Error(fmtErr("open: key-from-env-1 and value-named-1 under /root"))
	if err.Error() != "open: xxxxx and xxxxx under /root" {
		t.Errorf("Error() = %q", err.Error())
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("the redacted error lost its chain")
	}
}

func fmtErr(msg string) error { return &wrapped{msg} }

type wrapped struct{ msg string }

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return fs.ErrNotExist }

// TestCandidatesAreExact: the shapes left out of a text are shapes whose expressions leave it
// alone: String masks as all the expressions together would.
func TestCandidatesAreExact(t *testing.T) {
	r := New("s3cr3t-token-value")
	for _, s := range []string{
		"y", "INFO step 3: loss=0.5 lr=3e-4", "Token: abcdef", "TOKEN=abc", "x-api-KEY: v1234567",
		"Authorization: BASIC dXNlcjpwYXNz", "BeArEr abcdefgh12345678", "see https://u:p@h/x",
		"sk-abcdefgh123", "\u212aey=value1", "\u017fecret: value1", "passwd=hunter2", "credentials=a:b",
		"s3cr3t-token-value", "the key to the secret of the token is: nothing", "a=b key",
		"generated tokens: 128, prompt_tokens=12", "postgres://u:s3cr3t-token-value@db/x token=abc sk-12345678901",
		"Authorization: Token AuTh7766zzqq", "token\vabc123456", "api_key\tabcdefg12", "mytoken abcdef123", "TOKEN ab1", "key:", "token",
	} {
		if got, want := r.String(s), r.mask(s, allShapes); got != want {
			t.Errorf("String(%q) = %q, all the expressions give %q", s, got, want)
		}
	}
	if c := r.candidates("INFO step 3: loss=0.5 lr=3e-4 throughput: 1000 samples/s"); c != 0 {
		t.Errorf("a plain log line has candidates %b", c)
	}
}

// FuzzCandidates: the filter in front of the expressions never leaves out a shape whose
// expression would change the text.
func FuzzCandidates(f *testing.F) {
	for _, s := range []string{"y\n", "INFO step 3: loss=0.5", "Token: abcdef", "Authorization: Token AuTh7766zzqq", "x-api-key abc123456", "http://u:p@h/", "Bearer abcdefgh12345678", "\u212aey=v1", "sk-abcdefgh123 s3cr3t-token-value"} {
		f.Add(s)
	}
	r := New("s3cr3t-token-value")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := r.String(s), r.mask(s, allShapes); got != want {
			t.Errorf("String(%q) = %q, all the expressions give %q", s, got, want)
		}
	})
}

// TestHeaders: a definition's header values are secrets, with the credential of a
// "SCHEME CREDENTIAL" value alone too; content negotiation headers are not. Secret-named env:
// values are secrets, others not.
func TestHeaders(t *testing.T) {
	got := Headers(map[string]string{
		"X-Api-Key": "K3yValue9988xx", "Authorization": "Token AuTh7766zzqq", "X-Org": "org-4711",
		"Content-Type": "application/json", "accept": "text/event-stream", "User-Agent": "inferbench",
	})
	want := []string{"AuTh7766zzqq", "K3yValue9988xx", "Token AuTh7766zzqq", "org-4711"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Headers = %q, want %q", got, want)
	}
	if got := EnvValues(map[string]string{"HF_TOKEN": "hf-1234567", "OMP_NUM_THREADS": "4"}); len(got) != 1 || got[0] != "hf-1234567" {
		t.Errorf("EnvValues = %q, want [hf-1234567]", got)
	}
}
