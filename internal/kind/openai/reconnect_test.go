package openai

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/subject"
)

// TestServerClosedIdleConnection: a server that closes a kept-alive connection as the next request
// arrives (llama.cpp's server does, after 5 requests or 5 idle seconds) must not fail that request:
// nothing was answered, so it is sent again on a new connection. Before requests carried an
// idempotency key, Go's transport did not resend a POST and the request failed with "server closed
// idle connection" / EOF (seen against llama-server at concurrency 2).
func TestServerClosedIdleConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	body := sse(`{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`, "[DONE]")
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				for n := 0; ; n++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					if n == 1 { // the second request on this connection: close, answer nothing
						return
					}
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
				}
			}(c)
		}
	}()
	s := open(t, Config{URL: "http://" + l.Addr().String() + "/v1", MaxConnections: 1})
	for i := range 4 {
		o, err := s.Do(context.Background(), subject.Request{Index: i})
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if o.OutputTokens != 1 || !strings.Contains(s.endpoint, "/chat/completions") {
			t.Errorf("request %d: %+v", i, o)
		}
	}
}
