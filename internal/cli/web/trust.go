package web

import (
	"context"
	"net"
	"net/http"
	"strings"

	"github.com/inferbench/inferbench/internal/redact"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/store"
)

// hostOK reports whether a request's Host header names this machine's loopback interface
// (localhost, *.localhost, 127.0.0.0/8, ::1), with any port. A server without a token listens
// only on loopback and answers only such requests: a web page that rebinds its own domain name
// to 127.0.0.1 (DNS rebinding) sends its own name in Host and gets nothing.
func hostOK(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(h, "."), "["), "]")
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// checkHost refuses a request whose Host is not loopback (see hostOK), with 421.
func checkHost(w http.ResponseWriter, r *http.Request) bool {
	if hostOK(r.Host) {
		return true
	}
	http.Error(w, "misdirected request: this server answers only requests for localhost or a loopback address (Host "+r.Host+" refused); serve off loopback with --token", http.StatusMisdirectedRequest)
	return false
}

// cleanStore hands out stored runs with their secrets redacted: a run recorded by an older
// inferbench may hold a token in config.args or a key in an error, and the API must not
// serve it.
type cleanStore struct{ store.Store }

func (c cleanStore) Get(ctx context.Context, id string) (*result.Run, error) {
	r, err := c.Store.Get(ctx, id)
	if err == nil {
		redact.Run(r)
	}
	return r, err
}
