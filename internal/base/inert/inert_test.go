package inert

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// Plain text, newlines and tabs, and UTF-8 stay.
		{"resnet/batch_size=8\tok\n", "resnet/batch_size=8\tok\n"},
		{"größe=µs ✓", "größe=µs ✓"},
		// An escape sequence that would clear the screen and retitle the terminal.
		{"x\x1b[2J\x1b]0;pwned\x07", `x\x1b[2J\x1b]0;pwned\x07`},
		// A carriage return that would overwrite the line, DEL, NUL.
		{"ok\rFAILED\x7f\x00", `ok\rFAILED\x7f\x00`},
		// C1 controls (8-bit CSI) as UTF-8, and a byte that is not UTF-8.
		{"a\u009b31mb\xff", `a\u009b31mb\xff`},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestWriter: the escapes hold across writes, a UTF-8 sequence cut between two included.
func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := Writer(&b)
	in := []byte("é\x1b[31m\u009b")
	for i := range in {
		if n, err := w.Write(in[i : i+1]); n != 1 || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	if got, want := b.String(), `é\x1b[31m\u009b`; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

// FuzzText: what Text returns holds no control character but newline and tab, is valid UTF-8,
// and is the text itself when it held none; Writer writes the same in pieces of any size.
func FuzzText(f *testing.F) {
	for _, s := range []string{"plain", "a\x1b[2Jb", "\u009b\r\x7f", "é\xff\xc3", ""} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, cut uint8) {
		got := Text(s)
		if !utf8.ValidString(got) || !clean(got) {
			t.Fatalf("Text(%q) = %q still holds a control character", s, got)
		}
		if clean(s) && got != s {
			t.Fatalf("Text(%q) = %q changed clean text", s, got)
		}
		var b bytes.Buffer
		w := Writer(&b)
		n := int(cut)%8 + 1
		for i := 0; i < len(s); i += n {
			w.Write([]byte(s[i:min(i+n, len(s))]))
		}
		if clean(s) && b.String() != s || utf8.ValidString(s) && b.String() != got {
			t.Fatalf("Writer in pieces of %d: %q, Text: %q", n, b.String(), got)
		}
	})
}
