package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// TestTracebackKeepsLineBreaks: a failed scenario's traceback reads as one, a line per frame, in
// report.html (issue 23: the note cell collapsed it into one paragraph).
func TestTracebackKeepsLineBreaks(t *testing.T) {
	r := testRun(1, 20)
	tb := "worker setup: failed: ValueError: boom\nTraceback (most recent call last):\n  File \"benches/b.py\", line 2, in run_b\nValueError: boom"
	r.Scenarios[0].Status, r.Scenarios[0].Error = result.StatusFailed, tb
	var buf bytes.Buffer
	if err := RunHTML(&buf, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.Contains(page, "Traceback (most recent call last):\n  File &#34;benches/b.py&#34;, line 2, in run_b\n") {
		t.Errorf("the traceback's lines are not in the page as written")
	}
	rule := regexp.MustCompile(`td\.note \{[^}]*\}`).FindString(page)
	if !strings.Contains(rule, "white-space: pre-wrap") && !strings.Contains(rule, "white-space: pre-line") {
		t.Errorf("the note cell's rule %q collapses line breaks (want white-space: pre-wrap)", rule)
	}
}

// TestFailureListKeepsLineBreaks: the failure list at the top of report.html (the notes on
// scenarios) shows a traceback a line per frame, as the table's note cell does. Before, its
// list item collapsed the traceback into one paragraph.
func TestFailureListKeepsLineBreaks(t *testing.T) {
	r := testRun(1, 20)
	r.Scenarios[0].Status, r.Scenarios[0].Error = result.StatusFailed, "worker run: failed: ValueError: boom\nTraceback (most recent call last):\n  File \"benches/b.py\", line 2, in run_b\nValueError: boom"
	var buf bytes.Buffer
	if err := RunHTML(&buf, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !regexp.MustCompile(`<li class="error"><b>[^<]*</b>: [^<]*Traceback \(most recent call last\):\n  File `).MatchString(page) {
		t.Fatalf("the failure list does not hold the traceback's lines")
	}
	rule := regexp.MustCompile(`\.advice li\.warn, \.advice li\.error \{[^}]*\}`).FindString(page)
	if !strings.Contains(rule, "white-space: pre-wrap") {
		t.Errorf("the failure list's items collapse line breaks: no white-space: pre-wrap rule for .advice li.error (%q)", rule)
	}
}
