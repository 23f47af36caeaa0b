package openai

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/valyala/fastjson"
)

type ev struct{ Type, ID, Data string }

func scanAll(t *testing.T, r io.Reader) ([]ev, error) {
	t.Helper()
	sc := NewScanner(r)
	var got []ev
	for sc.Scan() {
		e := sc.Event()
		if e.At.IsZero() {
			t.Errorf("event %q has no arrival time", e.Data)
		}
		got = append(got, ev{e.Type, e.ID, string(e.Data)})
	}
	return got, sc.Err()
}

func TestScanner(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []ev
	}{
		{"one event", "data: hello\n\n", []ev{{Data: "hello"}}},
		// OpenAI framing: one JSON chunk per event, then [DONE].
		{"openai", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []ev{{Data: `{"a":1}`}, {Data: "[DONE]"}}},
		// Comments are keep-alives and never events.
		{"comments", ": ping\n\n: ping\ndata: x\n\n:\n\n", []ev{{Data: "x"}}},
		// Data lines join with LF.
		{"multi-line", "data: a\ndata: b\ndata:\n\n", []ev{{Data: "a\nb\n"}}},
		// Only one space after the colon is removed; no colon means an empty value.
		{"spaces", "data:  two\n\ndata\n\ndata:x\n\n", []ev{{Data: " two"}, {Data: ""}, {Data: "x"}}},
		// CRLF and lone CR endings.
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []ev{{Data: "a"}, {Data: "b"}}},
		{"cr", "data: a\r\rdata: b\r\r", []ev{{Data: "a"}, {Data: "b"}}},
		{"mixed", "data: a\r\ndata: b\rdata: c\n\n", []ev{{Data: "a\nb\nc"}}},
		// CR then LF is one ending, CR CR is two, LF CR is two.
		{"cr pairs", "data: a\r\n\rdata: b\n\rdata: c\r\r\n", []ev{{Data: "a"}, {Data: "b"}, {Data: "c"}}},
		// Event type and id; they reset between events.
		{"fields", "event: error\nid: 7\ndata: {}\n\ndata: next\n\n", []ev{{Type: "error", ID: "7", Data: "{}"}, {Data: "next"}}},
		// An event with no data is not dispatched, and its type does not leak into the next.
		{"no data", "event: ping\n\ndata: x\n\n", []ev{{Data: "x"}}},
		// Unknown fields and retry are ignored.
		{"unknown", "retry: 100\nfoo: bar\ndata: x\n\n", []ev{{Data: "x"}}},
		// An event cut off by the end of the stream is kept.
		{"cut off", "data: a\n\ndata: b", []ev{{Data: "a"}, {Data: "b"}}},
		{"empty", "", nil},
		{"blank lines only", "\n\n\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := scanAll(t, strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			// The same bytes one at a time give the same events.
			got, err = scanAll(t, iotest.OneByteReader(strings.NewReader(tt.in)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events read byte by byte (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScannerLongLine(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	got, err := scanAll(t, strings.NewReader("data: "+long+"\r\n\r\ndata: y\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Data != long || got[1].Data != "y" {
		t.Errorf("got %d events, first %d bytes", len(got), len(got[0].Data))
	}
}

func TestScannerTooLarge(t *testing.T) {
	line := "data: " + strings.Repeat("x", 1<<20) + "\n"
	r := io.MultiReader(strings.NewReader(strings.Repeat(line, 17)), strings.NewReader("\n"))
	_, err := scanAll(t, r)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("err = %v, want an event-size error", err)
	}
}

func TestScannerReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom))
	got, err := scanAll(t, r)
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want %v", err, boom)
	}
	// The complete event before the error is delivered; the unfinished one is not.
	if diff := cmp.Diff([]ev{{Data: "a"}}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestScannerCRLinear reads 20,000 events with CR-only line endings: in linear time and memory,
// which a test checks by the bytes allocated (the scanner used to rebuild its reader at every CR,
// allocating a buffer per line and taking seconds per request).
func TestScannerCRLinear(t *testing.T) {
	const n = 20_000
	in := strings.Repeat("data: {\"choices\":[{\"text\":\"x\"}]}\r\r", n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sc := NewScanner(strings.NewReader(in))
	got := 0
	for sc.Scan() {
		got++
	}
	runtime.ReadMemStats(&after)
	if sc.Err() != nil || got != n {
		t.Fatalf("%d events, err %v; want %d", got, sc.Err(), n)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(in)) {
		t.Errorf("reading %d bytes allocated %d bytes: not linear", len(in), alloc)
	}
}

// TestScannerCRDispatch checks that an event ended by CRs is delivered when its blank line
// arrives, not when a later LF or the end of the stream does: its arrival time is its TTFT.
func TestScannerCRDispatch(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	sc := NewScanner(pr)
	got := make(chan string, 1)
	go func() {
		if sc.Scan() {
			got <- string(sc.Event().Data)
		}
		close(got)
	}()
	go pw.Write([]byte("data: a\r\r")) //nolint:errcheck // the reader reports what arrived
	select {
	case d := <-got:
		if d != "a" {
			t.Fatalf("event %q, want a", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an event ended by CR CR was not delivered before more data came")
	}
}

func BenchmarkScanner(b *testing.B) {
	chunk := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" the"},"finish_reason":null}]}` + "\n\n"
	stream := strings.Repeat(chunk, 32) + "data: [DONE]\n\n"
	r := strings.NewReader(stream)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(stream)
		sc := NewScanner(r)
		for sc.Scan() {
		}
	}
}

// BenchmarkParseChunk: one vLLM content chunk, as the client parses 32 of them per request.
func BenchmarkParseChunk(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-7f3","object":"chat.completion.chunk","created":1732000000,"model":"m","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}`)
	var p fastjson.Parser
	b.ReportAllocs()
	for b.Loop() {
		if c, err := parseChunk(&p, data, false); err != nil || c.textLen != 4 {
			b.Fatal(c, err)
		}
	}
}
