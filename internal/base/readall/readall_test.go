package readall_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/inferbench/inferbench/internal/base/readall"
)

func TestInto(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		buf     []byte
		limit   int
		want    string
		wantErr string
	}{
		// A body shorter than the buffer's capacity.
		{name: "fits", in: "hello", buf: make([]byte, 0, 64), limit: 100, want: "hello"},
		// A body that has to grow the buffer, appended after what it held.
		{name: "grows", in: strings.Repeat("x", 1000), buf: []byte("ab"), limit: 2000, want: "ab" + strings.Repeat("x", 1000)},
		// An empty body.
		{name: "empty", in: "", limit: 10, want: ""},
		// A body over the limit names what it was reading.
		{name: "over", in: strings.Repeat("x", 100), buf: make([]byte, 0, 16), limit: 10, wantErr: "request body over 10 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readall.Into(iotest.OneByteReader(strings.NewReader(tc.in)), tc.buf, tc.limit, "request body")
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Into: error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("Into = %q, %v; want %q, nil", got, err, tc.want)
			}
		})
	}
}

func TestIntoReadError(t *testing.T) {
	boom := errors.New("boom")
	got, err := readall.Into(iotest.TimeoutReader(bytes.NewReader([]byte("abc"))), nil, 10, "response body")
	if !errors.Is(err, iotest.ErrTimeout) || string(got) != "abc" {
		t.Fatalf("Into = %q, %v; want %q, %v", got, err, "abc", iotest.ErrTimeout)
	}
	if _, err := readall.Into(iotest.ErrReader(boom), nil, 10, "response body"); !errors.Is(err, boom) {
		t.Fatalf("Into: error %v, want %v", err, boom)
	}
}

func ExampleInto() {
	buf := make([]byte, 0, 4096) // reused across requests
	body, err := readall.Into(strings.NewReader(`{"model":"mock"}`), buf[:0], 64<<20, "request body")
	fmt.Println(string(body), err)
	// Output: {"model":"mock"} <nil>
}
