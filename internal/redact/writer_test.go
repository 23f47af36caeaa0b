package redact

import (
	"strings"
	"testing"
)

// countingWriter records each write it gets.
type countingWriter struct {
	writes []string
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes = append(c.writes, string(p))
	return len(p), nil
}

// TestWriter: lines are redacted whole, also when a line comes in pieces or a secret spans two
// writes; a line without end is held until Flush (or until it passes maxLine); and each Write
// reaches w in at most one write, however many lines it holds. Before, every line was a write
// of its own: 8 MiB of `yes` output took 6 s to write to a scenario's log.
func TestWriter(t *testing.T) {
	var out countingWriter
	w := NewWriter(&out, New("s3cr3t-token-value"))
	many := strings.Repeat("y\n", 10000)
	for _, p := range []string{
		many,
		"plain line\nAuthorization: Bearer abcdefgh", "12345678\nthe s3cr3t-tok", "en-value was here\n",
		"step 3: loss=0.5\npassword=hunter2\nlast line without end",
	} {
		before := len(out.writes)
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
		if n := len(out.writes) - before; n > 1 {
			t.Fatalf("one Write of %d bytes reached w in %d writes", len(p), n)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(out.writes, "")
	want := many + "plain line\nAuthorization: Bearer xxxxx\nthe xxxxx was here\nstep 3: loss=0.5\npassword=xxxxx\nlast line without end"
	if got != want {
		t.Errorf("wrote %q,\nwant %q", got[len(many):], want[len(many):])
	}

	// A line longer than maxLine is passed on without waiting for its end.
	out.writes = nil
	long := strings.Repeat("a", maxLine+1)
	w.Write([]byte(long))
	if strings.Join(out.writes, "") != long {
		t.Errorf("a line of %d bytes without end was held back", len(long))
	}
}
