package mockserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/inferbench/inferbench/internal/kind/openai"
	"github.com/inferbench/inferbench/internal/workload"
)

// signature describes a chunk by what it carries and its keys, not its values: its kind (role,
// content, finish, usage), the keys of its choice and delta, and whether it has usage and timings.
func signature(t *testing.T, data []byte) string {
	t.Helper()
	var c struct {
		Choices []map[string]json.RawMessage `json:"choices"`
		Usage   json.RawMessage              `json:"usage"`
		Timings json.RawMessage              `json:"timings"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("chunk %s: %v", data, err)
	}
	var top map[string]json.RawMessage
	json.Unmarshal(data, &top) //nolint:errcheck // decoded above
	_, hasUsage := top["usage"]
	usage := "no usage"
	switch {
	case hasUsage && string(c.Usage) == "null":
		usage = "usage null"
	case hasUsage:
		usage = "usage"
	}
	if len(c.Choices) == 0 {
		return "usage chunk: " + usage
	}
	ch := c.Choices[0]
	var delta map[string]any
	json.Unmarshal(ch["delta"], &delta) //nolint:errcheck // absent in completions
	kind := "role"
	if s, _ := delta["content"].(string); s != "" {
		kind = "content"
	}
	if fr := string(ch["finish_reason"]); fr != "" && fr != "null" {
		kind += "+finish"
	}
	return fmt.Sprintf("%s choice%v delta%v %s timings:%v", kind, slices.Sorted(mapsKeys(ch)), slices.Sorted(mapsKeys(delta)), usage, c.Timings != nil)
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// signatures reads a stream: its chunks' signatures, runs of the same one collapsed, and whether
// it opened with a comment.
func signatures(t *testing.T, text string) []string {
	t.Helper()
	sc := openai.NewScanner(strings.NewReader(text))
	var out []string
	for sc.Scan() {
		d := sc.Event().Data
		s := "[DONE]"
		if string(d) != "[DONE]" {
			s = signature(t, d)
		}
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	if sc.Err() != nil {
		t.Fatal(sc.Err())
	}
	return out
}

// TestShapesMatchFixtures: each shape's stream has the chunks, in the order and with the keys, of
// the stream recorded from the server it stands for.
func TestShapesMatchFixtures(t *testing.T) {
	for _, shape := range Shapes {
		t.Run(shape, func(t *testing.T) {
			fixture, err := os.ReadFile(filepath.Join("..", "kind", "openai", "testdata", "streams", shape+"_chat.sse"))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(New(Config{Shape: shape}).Handler())
			defer srv.Close()
			resp := post(t, srv.URL+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"a b"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":4}`)
			var b strings.Builder
			if _, err := bufio.NewReader(resp.Body).WriteTo(&b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(signatures(t, string(fixture)), signatures(t, b.String())); diff != "" {
				t.Errorf("shape %s against its fixture (-fixture +mockserver):\n%s", shape, diff)
			}
		})
	}
	if err := New(Config{}).cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (Config{Shape: "vlm"}).Validate(); err == nil || !strings.Contains(err.Error(), "vllm, sglang") {
		t.Errorf("unknown shape: %v", err)
	}
	if EmitField != openai.EmitField {
		t.Errorf("mockserver.EmitField %q, openai.EmitField %q", EmitField, openai.EmitField)
	}
}

// TestStreamOpensWithFirstToken: nothing but the headers comes before the first token, whatever
// the shape. The role-only chunk used to go out at once, before the TTFT wait, and clients that
// time the first chunk (vLLM's benchmark) read TTFT 3.5 ms for a 20 ms server.
func TestStreamOpensWithFirstToken(t *testing.T) {
	const ttft = 40 * time.Millisecond
	for _, shape := range append([]string{ShapeDefault}, Shapes...) {
		t.Run("shape="+shape, func(t *testing.T) {
			srv := httptest.NewServer(New(Config{Shape: shape, TTFT: workload.Fixed(40), OutputTokens: workload.Fixed(3)}).Handler())
			defer srv.Close()
			sent := time.Now()
			resp := post(t, srv.URL+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"a"}],"stream":true}`)
			buf := make([]byte, 1)
			if _, err := resp.Body.Read(buf); err != nil {
				t.Fatal(err)
			}
			if got := time.Since(sent); got < ttft-2*time.Millisecond {
				t.Errorf("first byte of the body %v after the request, before the TTFT of %v", got, ttft)
			}
		})
	}
}

// TestTTFTFromLastByte: the TTFT clock starts when the request's last byte arrives. A client that
// sends the headers, then the body 80 ms later, gets its first token a TTFT after the body. Before,
// the clock started at the headers and the first token came at once after the late body.
func TestTTFTFromLastByte(t *testing.T) {
	const ttft, late = 30 * time.Millisecond, 80 * time.Millisecond
	ms := New(Config{TTFT: workload.Fixed(30), OutputTokens: workload.Fixed(2), Record: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, err := ms.Start(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/v1"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := `{"model":"m","messages":[{"role":"user","content":"a"}],"stream":true}`
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	time.Sleep(late)
	bodySent := time.Now()
	if _, err := c.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := openai.NewScanner(resp.Body)
	if !sc.Scan() {
		t.Fatalf("no event: %v", sc.Err())
	}
	if got := time.Since(bodySent); got < ttft-2*time.Millisecond {
		t.Errorf("first token %v after the body's last byte, want at least the TTFT %v", got, ttft)
	}
	for sc.Scan() {
	}
	e := ms.Emissions()
	if len(e) != 1 {
		t.Fatalf("%d emissions", len(e))
	}
	if d := e[0].Received.Sub(bodySent); d < -time.Millisecond || d > 20*time.Millisecond {
		t.Errorf("received %v after the body was sent, want its arrival", d)
	}
}
