package callgrind

import (
	"strings"
	"testing"
)

// FuzzReadFile feeds arbitrary text to the reader of a callgrind file's totals: it never
// panics, and a file it accepts has an Ir count and a cycle estimate at least as large.
func FuzzReadFile(f *testing.F) {
	f.Add(sample)
	f.Add("events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nsummary: 4037753 200164 34079 0 2066 15\n")
	f.Add("events: Ir\ntotals: 18446744073709551615\n")
	f.Add("events: Ir\ntotals: NaN\n")
	f.Add("events:\nsummary:\n")
	f.Fuzz(func(t *testing.T, text string) {
		c, err := read(strings.NewReader(text), "fuzz.out")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.out: ") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		if _, ok := c.Events["Ir"]; !ok {
			t.Errorf("accepted counts %v without Ir", c.Events)
		}
		if c.EstCycles() < c.Instructions() {
			t.Errorf("accepted counts %v: est_cycles %d below instructions %d (an overflow)", c.Events, c.EstCycles(), c.Instructions())
		}
	})
}
