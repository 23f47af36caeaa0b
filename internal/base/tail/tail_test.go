package tail

import (
	"bytes"
	"strings"
	"testing"
)

// TestBuffer: the tail keeps the last Max bytes from a line boundary and copies everything to W.
func TestBuffer(t *testing.T) {
	var all bytes.Buffer
	b := &Buffer{Max: 16, W: &all}
	for _, line := range []string{"first line\n", "second line\n", "third\n", "last one\n"} {
		b.Write([]byte(line)) //nolint:errcheck // never fails
	}
	// The last 16 bytes are "\nthird\nlast one\n": the tail starts at the line after the cut.
	if got := b.String(); got != "third\nlast one" {
		t.Errorf("tail %q, want %q (the last 16 bytes, from the first line that starts in them)", got, "third\nlast one")
	}
	if !strings.HasPrefix(all.String(), "first line\n") || all.Len() != 38 {
		t.Errorf("copied %q, want all 38 bytes", all.String())
	}
	short := &Buffer{Max: 64}
	short.Write([]byte("one\ntwo\n")) //nolint:errcheck // never fails
	if got := short.String(); got != "one\ntwo" {
		t.Errorf("uncut tail %q, want %q", got, "one\ntwo")
	}
}
