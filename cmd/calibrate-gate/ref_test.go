package main

import (
	"strings"
	"testing"
)

// The paired path writes a kind's variables into its files, since both sides share the
// environment: ${NAME} in a definition and os.environ.get in Python; halfway is half the
// slowdown, whole numbers kept whole.
func TestLiteralAndHalfway(t *testing.T) {
	files := literal(map[string]string{
		"benches/cal.yaml": `subject: {kind: exec, command: [sleep, "${CAL_SLEEP_S}"]}`,
		"benches/cal.py":   `_n = int(os.environ.get("CAL_N", "1000"))`,
	}, map[string]string{"CAL_SLEEP_S": "0.011", "CAL_N": "55000"})
	if !strings.Contains(files["benches/cal.yaml"], `[sleep, "0.011"]`) || files["benches/cal.py"] != `_n = int("55000")` {
		t.Errorf("literal: %v", files)
	}
	h := halfway(map[string]string{"CAL_N": "50000", "CAL_S": "0.01"}, map[string]string{"CAL_N": "55000", "CAL_S": "0.012"})
	if h["CAL_N"] != "52500" || h["CAL_S"] != "0.011000" {
		t.Errorf("halfway: %v", h)
	}
}

// The table's make command runs what was measured: a subset of the kinds and a load other than
// the Makefile's default are in it (before, `make calibrate-ref N=40` stood for a run of two
// kinds, and would have run all six).
func TestRefTarget(t *testing.T) {
	for _, c := range []struct {
		o    options
		want string
	}{
		{options{n: 40, measure: "time", load: "both", kinds: []string{"pyfunc", "mock"}}, "make calibrate-ref N=40 KINDS=pyfunc,mock"},
		{options{n: 100, measure: "instructions", load: "off", kinds: []string{"exec"}}, "make calibrate-ref N=100 MEASURE=instructions LOAD=off KINDS=exec"},
		{options{n: 100, measure: "time", load: "both"}, "make calibrate-ref N=100"},
	} {
		if got := refTarget(c.o); got != c.want {
			t.Errorf("refTarget(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
}
