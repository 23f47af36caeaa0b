package web

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/internal/testkit/storetest"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
)

// A server without a token answers only requests for loopback names: a page that rebinds its
// own domain to 127.0.0.1 (DNS rebinding) gets 421. Before, any Host was answered.
func TestDNSRebindingRefused(t *testing.T) {
	srv, _ := newTestServer(t)
	for host, want := range map[string]int{
		"127.0.0.1:8080": 200, "localhost:8080": 200, "[::1]:8080": 200, "LOCALHOST": 200, "app.localhost:1": 200,
		"evil.example:8080": 421, "127.0.0.1.evil.example": 421, "10.0.0.1:8080": 421, "": 421,
	} {
		if w := get(t, srv, "/api/runs", "Host", host); w.Code != want {
			t.Errorf("Host %q: %d, want %d", host, w.Code, want)
		}
	}
	// With a token (serve off loopback), the token guards every request whatever the Host.
	tok, _ := newTestServer(t, WithToken("s3cret"))
	if w := get(t, tok, "/api/runs", "Host", "bench.example:8080", "Authorization", "Bearer s3cret"); w.Code != 200 {
		t.Errorf("with a token, Host bench.example: %d, want 200", w.Code)
	}
}

// The API does not hand out a secret an older inferbench stored with a run (config.args, an
// echoed key in an error).
func TestAPIHidesStoredSecrets(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Params{URL: "sqlite:" + filepath.Join(t.TempDir(), "h.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := storetest.MakeRun("old", storetest.T0, 1, 10, []string{"resnet"}, 1, 10)
	r.Config.Args = []string{"run", "--metrics-token", "tok-secret-77", "--openai", "http://u:urlpw-88@h/v1"}
	r.Scenarios[0].Errors = []result.IterationError{{Error: "401: Incorrect API key provided: sk-abcdef0123456789"}}
	if err := st.Put(ctx, r); err != nil {
		t.Fatal(err)
	}
	srv := New(st)
	for _, path := range []string{"/api/runs/old", "/runs/old", "/api/runs/latest"} {
		w := get(t, srv, path)
		if w.Code != 200 {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
		}
		for _, s := range []string{"tok-secret-77", "urlpw-88", "sk-abcdef0123456789"} {
			if strings.Contains(w.Body.String(), s) {
				t.Errorf("GET %s hands out %q", path, s)
			}
		}
	}
}
