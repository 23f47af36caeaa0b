package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/subject"
)

// hugeBody writes a valid non-streamed completion whose content is n bytes, in 1 MiB writes,
// with or without a Content-Length.
func hugeBody(n int, length bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		head := `{"choices":[{"message":{"content":"`
		tail := `"},"finish_reason":"stop"}],"usage":{"completion_tokens":5}}`
		w.Header().Set("Content-Type", "application/json")
		if length {
			w.Header().Set("Content-Length", itoa(len(head)+n+len(tail)))
		}
		io.WriteString(w, head)
		chunk := strings.Repeat("x", 1<<20)
		for left := n; left > 0; left -= len(chunk) {
			if _, err := io.WriteString(w, chunk[:min(left, len(chunk))]); err != nil {
				return
			}
		}
		io.WriteString(w, tail)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestResponseBodyBound sends non-streamed answers larger than max_response_bytes (with and
// without Content-Length, at concurrency 16): each request fails with an error naming the limit,
// where the subject used to read up to 256 MiB per request (a 200 MB answer at concurrency 16
// got inferbench OOM-killed). The default bound holds a 24 MB answer too.
func TestResponseBodyBound(t *testing.T) {
	no := false
	for _, tc := range []struct {
		body, limit, n int
		length         bool
	}{
		{4 << 20, 1 << 20, 16, true},
		{4 << 20, 1 << 20, 16, false},
		{24 << 20, 0, 1, false}, // the default, DefaultMaxResponseBytes
	} {
		srv := httptest.NewServer(hugeBody(tc.body, tc.length))
		s := open(t, Config{URL: srv.URL + "/v1", Stream: &no, MaxResponseBytes: tc.limit})
		errs := make(chan error, tc.n)
		for range tc.n {
			go func() {
				_, err := s.Do(context.Background(), subject.Request{})
				errs <- err
			}()
		}
		for range tc.n {
			err := <-errs
			// A whole body that is too large says so; it is no stream that ended early (it
			// read "stream ended before [DONE]: response body over max_response_bytes").
			var e *Error
			if err == nil || !strings.Contains(err.Error(), "exceeded max_response_bytes") || strings.Contains(err.Error(), "stream") ||
				!errors.Is(err, ErrTooLarge) || errors.Is(err, ErrIncomplete) || !errors.As(err, &e) || e.Kind() != "response_too_large" {
				t.Errorf("%+v: err = %v, want a response_too_large error saying the body exceeded max_response_bytes", tc, err)
			}
		}
		if held := s.held.Load(); held != 0 {
			t.Errorf("%d bytes still counted as held after every request ended", held)
		}
		srv.Close()
	}
	// Within the bound, the same answer is read.
	srv := httptest.NewServer(hugeBody(1<<20, false))
	defer srv.Close()
	s := open(t, Config{URL: srv.URL + "/v1", Stream: &no, MaxResponseBytes: 2 << 20})
	if o, err := s.Do(context.Background(), subject.Request{}); err != nil || o.OutputTokens != 5 {
		t.Fatalf("1 MiB answer under a 2 MiB bound: %v, %d tokens", err, o.OutputTokens)
	}
}

// TestBudgetReader checks the shared bound of the bodies being read at once.
func TestBudgetReader(t *testing.T) {
	var held atomic.Int64
	a := &budgetReader{r: iotest.OneByteReader(strings.NewReader(strings.Repeat("a", 60))), held: &held, max: 100}
	b := &budgetReader{r: strings.NewReader(strings.Repeat("b", 60)), held: &held, max: 100}
	if _, err := io.ReadAll(a); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(b); !errors.Is(err, errBodyLimit) {
		t.Fatalf("second body: err %v, want the shared bound", err)
	}
	a.release()
	b.release()
	if held.Load() != 0 {
		t.Fatalf("held %d after release", held.Load())
	}
}

// TestEndlessStream is a server that streams content events forever: the request fails once the
// events pass the bound for its max_tokens, well before the timeout, instead of growing its
// observation until the timeout (or memory) runs out.
func TestEndlessStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		ev := strings.Repeat(content("x"), 64)
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, ev); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	s := open(t, Config{URL: srv.URL + "/v1", Timeout: time.Minute,
		Workload: workload.Config{OutputTokens: workload.Fixed(16)}})
	o, err := s.Do(context.Background(), subject.Request{})
	if err == nil || !strings.Contains(err.Error(), "past 1088 content events") {
		t.Fatalf("err = %v, want the content-event bound", err)
	}
	if len(o.Tokens) != 1088 {
		t.Errorf("%d content events kept, want 1088", len(o.Tokens))
	}
}

// TestTimeoutWhileParsingCR is a server that sends CR-only keep-alive comments without end: the
// request ends at its timeout, as a timeout (each CR ends a line, so nothing accumulates; the
// scanner used to wait for a LF, collecting the comments into one "line" until its size bound).
func TestTimeoutWhileParsingCR(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		ping := strings.Repeat(": ping\r", 512)
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, ping); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	s := open(t, Config{URL: srv.URL + "/v1", Timeout: 2 * time.Second})
	start := time.Now()
	_, err := s.Do(context.Background(), subject.Request{})
	var e *Error
	if !errors.As(err, &e) || e.Kind() != "timeout" {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("returned after %v with a 2s timeout", d)
	}
}
