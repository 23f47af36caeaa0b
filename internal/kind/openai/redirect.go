package openai

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/inferbench/inferbench/internal/redact"
)

// maxRedirects is how many redirects a request follows, as net/http's default.
const maxRedirects = 10

// checkRedirect is the client's redirect policy: a redirect to another origin (scheme, host or
// port) gets none of the request's credentials. net/http drops Authorization and Cookie only
// for another host, and keeps them for another port of the same host; it forwards every other
// header, a definition's X-Api-Key or X-Org-Secret included. Here every header that may carry a
// credential (redact.CredentialHeader: all of the definition's headers but Content-Type,
// Accept*, User-Agent and the like; Authorization, the api_key_env key, included) is removed
// before the request leaves for the other origin. Its server then answers as it would a
// request without them (401, usually), and that answer is the request's.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	if sameOrigin(req.URL, via[0].URL) {
		return nil
	}
	for name := range req.Header {
		if redact.CredentialHeader(name) && name != "Traceparent" && name != "Tracestate" { // canonical names
			req.Header.Del(name)
		}
	}
	for _, name := range []string{"Authorization", "Proxy-Authorization", "Cookie"} {
		req.Header.Del(name)
	}
	return nil
}

// sameOrigin reports whether a and b have one origin: scheme, host and port (the scheme's
// default port when none is written).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}
