// Package inert makes text safe to show: the control characters of a name or a parameter (an
// escape sequence that moves the cursor, retitles the terminal or hides what follows, a carriage
// return that overwrites the line) are written as visible escapes (\x1b, \r, \u009b) instead of
// reaching a terminal or a text report as they are.
package inert

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Text returns s with its control characters escaped, but for newline and tab: a byte below
// 0x20, DEL and a byte that is not UTF-8 as \xNN, a C1 control (U+0080 to U+009F) as \uNNNN.
// Text without them is returned as it is.
func Text(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		writeRune(&b, s[i:i+n], r, n)
		i += n
	}
	return b.String()
}

// clean reports whether s has nothing Text escapes.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c >= 0x80 {
			if c < 0x80 {
				return false
			}
			return cleanUTF8(s[i:])
		}
	}
	return true
}

func cleanUTF8(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if escaped(r, n) {
			return false
		}
		i += n
	}
	return true
}

// escaped reports whether the rune r, read from n bytes, is escaped.
func escaped(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return true // not UTF-8
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	}
	return false
}

func writeRune(b *strings.Builder, raw string, r rune, n int) {
	switch {
	case !escaped(r, n):
		b.WriteString(raw)
	case r == '\r':
		b.WriteString(`\r`)
	case n == 1:
		fmt.Fprintf(b, `\x%02x`, raw[0])
	default:
		fmt.Fprintf(b, `\u%04x`, r)
	}
}

// Writer returns a writer that writes to w what it is given, escaped as Text does. A UTF-8
// sequence cut between two writes is held until the next. Its Write reports len(p) when w took
// the escaped text.
func Writer(w io.Writer) io.Writer { return &writer{w: w} }

type writer struct {
	w    io.Writer
	held []byte // the start of a UTF-8 sequence the last write ended in
}

func (w *writer) Write(p []byte) (int, error) {
	s := string(append(w.held, p...))
	w.held = w.held[:0]
	// Hold an incomplete UTF-8 sequence at the end (at most 3 bytes).
	for k := 1; k <= 3 && k <= len(s); k++ {
		if c := s[len(s)-k]; c >= 0xc0 {
			if !utf8.FullRuneInString(s[len(s)-k:]) {
				w.held = append(w.held, s[len(s)-k:]...)
				s = s[:len(s)-k]
			}
			break
		}
	}
	if _, err := io.WriteString(w.w, Text(s)); err != nil {
		return 0, err
	}
	return len(p), nil
}
