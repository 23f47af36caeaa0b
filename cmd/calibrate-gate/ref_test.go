package main

import (
	"regexp"
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

// Kinds measured by separate invocations stand side by side: a new part replaces the rows of
// its kinds in the older parts, a header left without rows goes, and so does a part left
// without any (before, each invocation replaced the whole section, so measuring one kind at
// N=100 threw away the others' rows).
func TestMergeRef(t *testing.T) {
	const header = "| kind | what one call does | rounds |\n|---|---|---|\n"
	old := "Measured 2026-12-03 06:17 UTC, commit a.\n\nCommand: `make calibrate-ref N=40 KINDS=pyfunc,mock`.\n\n" +
		header + "| pyfunc | sum | 40 |\n| mock | mock | 40 |\n| pyfunc (loaded) | sum | 40 |\n| mock (loaded) | mock | 40 |\n\n" +
		"pyfunc: error: worker died\n\n" +
		"Measured 2026-12-02 10:00 UTC, commit b.\n\nCommand: `make calibrate-ref N=10 KINDS=pyfunc`.\n\n" +
		header + "| pyfunc | sum | 10 |\n"
	part := "Measured 2026-12-03 09:00 UTC, commit c.\n\nCommand: `make calibrate-ref N=100 KINDS=pyfunc`.\n\n" +
		header + "| pyfunc | sum | 100 |\n| pyfunc (loaded) | sum | 100 |\n"
	doc := replaceMarked("# Title\n\nprose\n", old, refBeginMarker, refEndMarker)
	got := markedBody(replaceMarked(doc, mergeRef(markedBody(doc, refBeginMarker, refEndMarker), part, []string{"pyfunc", "pyfunc (loaded)"}), refBeginMarker, refEndMarker), refBeginMarker, refEndMarker)
	want := "Measured 2026-12-03 06:17 UTC, commit a.\n\nCommand: `make calibrate-ref N=40 KINDS=pyfunc,mock`.\n\n" +
		header + "| mock | mock | 40 |\n| mock (loaded) | mock | 40 |\n\n" + strings.TrimRight(part, "\n")
	if got != want {
		t.Errorf("merged:\n%s\nwant:\n%s", got, want)
	}
	// The same kinds again: the invocation's own earlier part (written after its first kind)
	// is replaced, not repeated.
	again := mergeRef(got, part, []string{"pyfunc", "pyfunc (loaded)"})
	if strings.Count(again, "| pyfunc | sum | 100 |") != 1 || !strings.Contains(again, "| mock | mock | 40 |") {
		t.Errorf("merged twice:\n%s", again)
	}
	if got := mergeRef("", part, []string{"pyfunc"}); got != part {
		t.Errorf("into an empty section: %q", got)
	}
}

// A kind's scenario says what one call does, not how long it takes: the time is the one the
// unchanged runs measured on the day, added by withPilot (a pyfunc call said "about 3 ms" and
// measured 5.07 ms).
func TestScenarioTimeIsMeasured(t *testing.T) {
	stated := regexp.MustCompile(`about [0-9]`)
	for _, k := range append(kinds(), countedKinds()...) {
		if stated.MatchString(k.scenario) {
			t.Errorf("%s: the scenario states a time: %q", k.name, k.scenario)
		}
	}
	if got := withPilot("summing squares", "latency_ms", 5.0734, "the pilot run's"); got != "summing squares (the pilot run's median latency_ms 5.07)" {
		t.Errorf("withPilot: %q", got)
	}
}
