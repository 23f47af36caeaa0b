package openai

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/subject"
)

// cannedServer answers every chat request with the same streamed answer of tokens content events,
// written whole, and allocates nothing per request: what a process running it allocates per
// request is the client's.
type cannedServer struct {
	ln   net.Listener
	resp []byte
}

func startCanned(t testing.TB, tokens int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &cannedServer{ln: ln, resp: cannedAnswer(tokens)}
	t.Cleanup(func() { ln.Close() })
	go s.serve()
	return "http://" + ln.Addr().String() + "/v1"
}

// cannedAnswer is a streamed answer as the mockserver's vllm shape writes it: a role chunk,
// tokens content chunks, a last chunk with finish_reason, usage and the server's emit note,
// [DONE], each event its own HTTP chunk.
func cannedAnswer(tokens int) []byte {
	var events []string
	chunk := func(delta, finish, extra string) string {
		return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"mock","choices":[{"index":0,"delta":` +
			delta + `,"logprobs":null,"finish_reason":` + finish + `}]` + extra + `}`
	}
	events = append(events, chunk(`{"role":"assistant","content":""}`, "null", ""))
	for range tokens {
		events = append(events, chunk(`{"content":" tok"}`, "null", ""))
	}
	events = append(events, chunk(`{}`, `"length"`, fmt.Sprintf(`,"usage":{"prompt_tokens":32,"completion_tokens":%d,"total_tokens":%d},"%s":{"first_together":false,"together":0}`, tokens, tokens+32, EmitField)))
	events = append(events, "[DONE]")
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n")
	for _, e := range events {
		ev := "data: " + e + "\n\n"
		fmt.Fprintf(&b, "%x\r\n%s\r\n", len(ev), ev)
	}
	b.WriteString("0\r\n\r\n")
	return b.Bytes()
}

func (s *cannedServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.conn(c)
	}
}

// conn reads requests (their headers to the blank line, then Content-Length bytes) and answers
// each with the canned answer.
func (s *cannedServer) conn(c net.Conn) {
	defer c.Close()
	br := bufio.NewReaderSize(c, 16<<10)
	for {
		n := -1
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(bytes.TrimSpace(line)) == 0 {
				break
			}
			if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
				n = 0
				for _, d := range bytes.TrimSpace(v) {
					n = 10*n + int(d-'0')
				}
			}
		}
		if n < 0 {
			return // the client sends a length
		}
		if _, err := br.Discard(n); err != nil {
			return
		}
		if _, err := c.Write(s.resp); err != nil {
			return
		}
	}
}

// openCanned opens a Subject against a canned server of tokens content events, asking for them.
func openCanned(t testing.TB, tokens int) *Subject {
	t.Helper()
	cfg := Config{URL: startCanned(t, tokens), Model: "mock", MetricsURL: "none", IgnoreEOS: new(bool),
		Workload: workload.Config{InputTokens: workload.Fixed(32), OutputTokens: workload.Fixed(float64(tokens))}}
	s, err := Open(context.Background(), cfg, subject.Params{"concurrency": 1}, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// streamCounts returns what one streamed request of s allocates, in allocations and bytes, on
// average over n requests after a warm-up.
func streamCounts(t testing.TB, s *Subject, tokens, n int) (allocs, bytes float64) {
	t.Helper()
	// A load driver's deadline of a call, as the engine's drivers give each request.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	i := 0
	do := func() {
		o, err := s.Do(ctx, subject.Request{Index: i})
		i++
		if err != nil || len(o.Tokens) != tokens {
			t.Fatalf("request %d: %d content events, %v; want %d", i, len(o.Tokens), err, tokens)
		}
	}
	for range 20 {
		do()
	}
	allocs = testing.AllocsPerRun(n, do)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range n {
		do()
	}
	runtime.ReadMemStats(&m1)
	return allocs, float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n)
}

// Bounds of what the client allocates (TestStreamAllocs): per streamed request of 32 content
// events over one kept-alive connection, Go's HTTP transport included; and per content event,
// which must be none. Measured: docs/measurements/serving.md, "The client's allocations".
const (
	maxAllocsPerRequest = 75
	maxBytesPerRequest  = 7 << 10
	maxAllocsPerEvent   = 0.05
)

// TestStreamAllocs holds the client's allocations per streamed request and per content event:
// fewer allocations mean fewer collections, and at 512 streams on one core each collection
// delays the reads of every request in flight (read_delay_ms). The allocations of a request of
// 128 events less those of one of 32 are those of 96 events.
func TestStreamAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own account")
	}
	a32, b32 := streamCounts(t, openCanned(t, 32), 32, 200)
	a128, _ := streamCounts(t, openCanned(t, 128), 128, 200)
	perEvent := (a128 - a32) / 96
	t.Logf("per streamed request of 32 events: %.1f allocations, %.0f bytes; per content event: %.3f allocations", a32, b32, perEvent)
	if a32 > maxAllocsPerRequest {
		t.Errorf("a streamed request of 32 events allocated %.1f times; want at most %d", a32, maxAllocsPerRequest)
	}
	if b32 > maxBytesPerRequest {
		t.Errorf("a streamed request of 32 events allocated %.0f bytes; want at most %d", b32, maxBytesPerRequest)
	}
	if perEvent > maxAllocsPerEvent {
		t.Errorf("a content event allocated %.3f times; want at most %v", perEvent, maxAllocsPerEvent)
	}
}
