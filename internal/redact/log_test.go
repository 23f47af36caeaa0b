package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestHandler: every text of a log record is redacted — the message, string attributes, errors,
// printed values, attributes added with With and inside groups — and numbers pass unchanged.
func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	r := New("topsecret-1")
	log := slog.New(Handler(slog.NewTextHandler(&buf, nil), r)).With("cmd", "run --key topsecret-1")
	log.Info("sent topsecret-1", "url", "https://u:pw123456@host/x", "err", errors.New("401: api_key=abcdefgh"),
		"args", []string{"a", "topsecret-1"}, "n", 42, slog.Group("g", "token", "Bearer abcdefghijkl"))
	out := buf.String()
	if strings.Contains(out, "topsecret-1") || strings.Contains(out, "pw123456") || strings.Contains(out, "abcdefgh") {
		t.Errorf("a secret got through: %s", out)
	}
	for _, want := range []string{`msg="sent xxxxx"`, `cmd="run --key xxxxx"`, `url=https://u:xxxxx@host/x`, `err="401: api_key=xxxxx"`, `args="[a xxxxx]"`, `n=42`, `g.token="Bearer xxxxx"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s: %s", want, out)
		}
	}
}
