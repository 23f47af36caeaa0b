package openai

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/inferbench/inferbench/subject"
)

// TestRedirectDropsCredentials: after a redirect to another origin, no credential reaches it.
// Before, a definition's X-Api-Key and X-Org-Secret reached another host, and the api_key_env
// key (Authorization) another port of the same host. A redirect within the origin keeps them.
func TestRedirectDropsCredentials(t *testing.T) {
	t.Setenv("TEST_REDIRECT_KEY", "sk-redirect-secret")
	target := newFake(t, 200, content(" a")+done)
	targetPort := target.URL[strings.LastIndexByte(target.URL, ':')+1:]
	for _, tc := range []struct {
		name string
		to   func(r *http.Request) string // where the first server redirects
		keep bool                         // whether the credentials may follow
	}{
		// Another port of the same host: another origin.
		{"other port", func(*http.Request) string { return target.URL + "/v1/chat/completions" }, false},
		// Another host name for the same address: another origin too.
		{"other host", func(*http.Request) string { return "http://localhost:" + targetPort + "/v1/chat/completions" }, false},
		// The same origin, another path.
		{"same origin", func(r *http.Request) string { return "/moved/chat/completions" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// got is written by the server's goroutine: a response over TCP is no
			// synchronisation the race detector sees, so it is read under mu.
			var (
				mu  sync.Mutex
				got http.Header
			)
			var front *httptest.Server
			front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/moved/") {
					mu.Lock()
					got = r.Header.Clone()
					mu.Unlock()
					target.Config.Handler.ServeHTTP(w, r)
					return
				}
				http.Redirect(w, r, tc.to(r), http.StatusTemporaryRedirect)
			}))
			defer front.Close()
			// Read under target.mu: the server's goroutine appends to hdrs, and the request
			// reaches it over TCP, which the race detector does not see as synchronisation.
			target.mu.Lock()
			before := len(target.hdrs)
			target.mu.Unlock()
			s := open(t, Config{URL: front.URL + "/v1", APIKeyEnv: "TEST_REDIRECT_KEY",
				Headers: map[string]string{"X-Api-Key": "key-123456", "X-Org-Secret": "org-secret-7", "X-Team": "perf"}})
			if _, err := s.Do(context.Background(), subject.Request{}); err != nil {
				t.Fatal(err)
			}
			if !tc.keep {
				target.mu.Lock()
				if len(target.hdrs) == before {
					target.mu.Unlock()
					t.Fatal("the redirect was not followed")
				}
				mu.Lock()
				got = target.hdrs[len(target.hdrs)-1]
				mu.Unlock()
				target.mu.Unlock()
			}
			mu.Lock()
			defer mu.Unlock()
			for _, h := range []string{"Authorization", "X-Api-Key", "X-Org-Secret", "X-Team"} {
				if has := got.Get(h) != ""; has != tc.keep {
					t.Errorf("%s after the redirect: %q (want kept: %v)", h, got.Get(h), tc.keep)
				}
			}
			if got.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type after the redirect: %q", got.Get("Content-Type"))
			}
		})
	}
}
