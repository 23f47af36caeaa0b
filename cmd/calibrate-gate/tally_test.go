package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestTally checks the counting: a comparison is one count whatever number of metrics failed,
// exit codes other than 0 and 3 are errors counted apart, and the rates are of the counted ones.
func TestTally(t *testing.T) {
	tl := newTally(kind{name: "exec", scenario: "`sleep 0.01`", injected: "sleep + 10%"})
	tl.addAA(exitOK, nil)
	tl.addAA(exitRegression, []failure{{"latency_ms", 20, 15}, {"peak_rss_mb", 0, 0}})
	tl.addAA(exitRegression, []failure{{"latency_ms", 30, 17}})
	tl.addAA(1, nil) // compare failed: neither a pass nor a failure
	for i := 0; i < 3; i++ {
		tl.addAA(exitOK, nil)
	}
	tl.addSlow(exitRegression, 1.10, 7.5, true)
	tl.addSlow(exitRegression, 1.12, 7.5, true)
	tl.addSlow(exitOK, 1.04, 15, false)
	tl.addSlow(2, 0, 0, false)
	tl.iterations = 30

	if tl.aa != 6 || tl.aaFailed != 2 || tl.slow != 3 || tl.slowFound != 2 || len(tl.errors) != 2 {
		t.Errorf("aa %d/%d, slow %d/%d, errors %d; want 6/2, 3/2, 2", tl.aa, tl.aaFailed, tl.slow, tl.slowFound, len(tl.errors))
	}
	if got := tl.failedOn(); got != "latency_ms ×2 (median change +25.0%, threshold 16.0%), peak_rss_mb ×1" {
		t.Errorf("failedOn = %q", got)
	}
	if got := tl.slowdown(); got != "+10.0%" {
		t.Errorf("slowdown = %q, want the median +10.0%%", got)
	}
	var b bytes.Buffer
	writeTable(&b, []*tally{tl})
	want := "| exec | 6 | 2 | 33.3% | 3 | 2 | 66.7% | 30 | +10.0% | 7.5% (2 of 3 from stored runs) |"
	if !strings.Contains(b.String(), want) {
		t.Errorf("table:\n%s\nwant the row\n%s", &b, want)
	}
	if got := rate(0, 0); got != "–" {
		t.Errorf("rate(0, 0) = %q, want a dash, not NaN", got)
	}
}

// TestReplaceSection: the generated section goes between its markers, the rest of the document
// stays; a document without markers gets them at its end.
func TestReplaceSection(t *testing.T) {
	doc := replaceSection("# Verdicts\n\nintro", "table 1\n")
	if !strings.HasPrefix(doc, "# Verdicts\n\nintro\n\n"+beginMarker+"\ntable 1\n"+endMarker) {
		t.Errorf("appended:\n%s", doc)
	}
	doc += "\n## After\n"
	doc = replaceSection(doc, "table 2")
	if strings.Contains(doc, "table 1") || !strings.Contains(doc, beginMarker+"\ntable 2\n"+endMarker) ||
		!strings.HasPrefix(doc, "# Verdicts\n\nintro") || !strings.HasSuffix(doc, "\n## After\n") {
		t.Errorf("replaced:\n%s", doc)
	}
}

// TestDocumentHasMarkers: the page make calibrate-gate and make calibrate-ref write (-write
// docs/measurements/verdicts.md) holds each generated section once, between its own markers, so
// that a rerun replaces the table instead of appending a second one.
func TestDocumentHasMarkers(t *testing.T) {
	const page = "../../docs/measurements/verdicts.md"
	doc, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range [][2]string{{beginMarker, endMarker}, {refBeginMarker, refEndMarker}} {
		if n := strings.Count(string(doc), m[0]); n != 1 {
			t.Errorf("%s: %d times %q, want once", page, n, m[0])
		}
		if n := strings.Count(string(doc), m[1]); n != 1 {
			t.Errorf("%s: %d times %q, want once", page, n, m[1])
		}
		if i, j := strings.Index(string(doc), m[0]), strings.Index(string(doc), m[1]); i < 0 || j < i {
			t.Errorf("%s: %q does not come before %q", page, m[0], m[1])
		}
	}
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(makefile), "-write docs/measurements/verdicts.md"); n != 2 {
		t.Errorf("Makefile: %d targets write docs/measurements/verdicts.md, want calibrate-gate and calibrate-ref", n)
	}
}
