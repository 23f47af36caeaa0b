package alert

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/inferbench/inferbench/result"
)

// TestPostBlackHole: a webhook that accepts the connection and never answers costs at most the
// deadline, 2 s by default (issue 23: every exporter and webhook has one).
func TestPostBlackHole(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held <- c
		}
	}()
	defer func() {
		for len(held) > 0 {
			(<-held).Close()
		}
	}()
	start := time.Now()
	err = postWebhook(context.Background(), nil, "http://"+ln.Addr().String()+"/hook", &result.Run{ID: "r"}, []Firing{{Message: "x"}})
	if took := time.Since(start); err == nil || took > defaultTimeout+500*time.Millisecond {
		t.Errorf("post to a black hole: %v after %v; want an error within %v", err, took, defaultTimeout)
	}
}

func TestTimeoutEnv(t *testing.T) {
	for v, want := range map[string]time.Duration{"": defaultTimeout, "5s": 5 * time.Second, "1500ms": 1500 * time.Millisecond, "x": 0, "-1s": 0} {
		got, err := alertTimeout(func(string) (string, bool) { return v, v != "" })
		if got != want || (err != nil) != (want == 0) {
			t.Errorf("%s=%q: %v, %v; want %v", timeoutEnv, v, got, err, want)
		}
	}
}
