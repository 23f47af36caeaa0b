package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/inferbench/inferbench/compare"
)

// A comparison as JUnit XML (--format junit): a test case per row, a failed one per regression
// and per nothing comparable, for CI systems that read only JUnit.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Time    string        `xml:"time,attr"`
	Failure *junitFailure `xml:"failure,omitempty"`
	Skipped *junitSkipped `xml:"skipped,omitempty"`
	Out     string        `xml:"system-out,omitempty"`
}

// junitSkipped is a case that was not decided: a budget whose metric was not measured, a gated
// change the comparison could not tell (undecided).
type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// compareJUnit writes the comparison as JUnit XML: a suite per benchmark, a test case per metric
// row and per budget, failed when it regressed or exceeded its budget, skipped (with why) when
// it is a gated change the comparison could not decide, which --strict fails instead; and a
// failed case whenever the comparison fails with no failed row, so that the XML fails exactly
// where the text output does.
func compareJUnit(w io.Writer, rep *compare.Report) error {
	suites := map[string]*junitSuite{}
	var order []string
	suite := func(b string) *junitSuite {
		if s, ok := suites[b]; ok {
			return s
		}
		s := &junitSuite{Name: b}
		suites[b] = s
		order = append(order, b)
		return s
	}
	for i := range rep.Rows {
		r := &rep.Rows[i]
		s := suite(r.Benchmark)
		c := junitCase{Class: r.Benchmark, Name: r.Scenario + " " + r.Metric, Time: "0",
			Out: fmt.Sprintf("old %s, new %s %s, %s %s", num(r.Old), num(r.New), r.Unit, cmpDelta(r), r.Verdict)}
		switch why := undecided(r); {
		case r.Failed():
			c.Failure = &junitFailure{Type: r.Verdict, Message: strings.TrimSuffix(fmt.Sprintf("%s %s: %s (limit %s); %s", r.Metric, r.Verdict, cmpDelta(r), cmpLimit(r), r.Uncertified()), "; "),
				Text: strings.Join(r.Warnings, "\n")}
			s.Failures++
		case why != "" && rep.Strict && !(r.Unresolved() && r.Improved()): // --strict fails it, as the text output does
			c.Failure = &junitFailure{Type: r.Verdict, Message: r.Metric + " " + why + " (--strict)", Text: strings.Join(r.Warnings, "\n")}
			s.Failures++
		case why != "":
			c.Skipped = &junitSkipped{Message: why}
		}
		s.Tests++
		s.Cases = append(s.Cases, c)
	}
	for _, b := range rep.Budgets {
		s := suite(b.Benchmark)
		c := junitCase{Class: b.Benchmark, Name: fmt.Sprintf("%s budget %s %s %s", b.Scenario, b.Metric, b.Op, num(b.Limit)), Time: "0"}
		switch {
		case !b.Measured:
			c.Skipped = &junitSkipped{}
		case !b.OK:
			c.Failure = &junitFailure{Type: "budget", Message: fmt.Sprintf("%s = %s, budget %s %s (%s)", b.Metric, num(b.Actual), b.Op, num(b.Limit), b.Source)}
			s.Failures++
		}
		s.Tests++
		s.Cases = append(s.Cases, c)
	}
	failures := rep.NoEvidence != ""
	for _, s := range suites {
		failures = failures || s.Failures > 0
	}
	if rep.Failed() && !failures { // a strict definition's undecided change: the XML fails too
		s := suite("inferbench")
		s.Cases = append(s.Cases, junitCase{Class: "inferbench", Name: "comparison passes", Time: "0",
			Failure: &junitFailure{Type: "strict", Message: "FAIL: " + Outcome(rep)}})
		s.Tests++
		s.Failures++
	}
	if rep.NoEvidence != "" { // a failed case, so that a CI reading only the XML fails too
		s := suite("inferbench")
		s.Cases = append(s.Cases, junitCase{Class: "inferbench", Name: "comparison has evidence", Time: "0",
			Failure: &junitFailure{Type: "no-evidence", Message: "nothing comparable: " + rep.NoEvidence}})
		s.Tests++
		s.Failures++
	}
	all := junitSuites{Name: "inferbench compare " + rep.Old.ID + " → " + rep.New.ID}
	for _, b := range order {
		s := suites[b]
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Suites = append(all.Suites, *s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// undecided says why row r is a gated change the comparison could not decide, with the smallest
// change it could have seen where that is known; "" when it is decided: beyond the threshold
// with a single value a side (Unverified), between two sessions whose run-to-run noise is not
// learnt (Unresolved: --strict fails a worse one, not an improvement), and a paired A/B whose
// interval still straddles the threshold when its budget was spent (an unknown with a test).
func undecided(r *compare.Row) string {
	switch {
	case !r.Gated:
		return ""
	case r.Verdict == compare.Unverified:
		return fmt.Sprintf("untested: %s beyond the limit %s with a single value a side; more iterations can test it", cmpDelta(r), cmpLimit(r))
	case r.Unresolved():
		limit := "limit " + cmpLimit(r)
		if r.Improved() {
			limit = "better beyond the threshold " + pctText(r.Threshold) + ", not an improvement"
		}
		return fmt.Sprintf("unknown between sessions: %+.1f%%, %s; the smallest change these sessions could have seen: at least %.1f%% (%d of %d stored sessions learn the noise)",
			r.Delta, limit, max(r.Threshold, r.Sessions.DriftPct), r.Sessions.Runs, r.Sessions.Need)
	case r.Verdict == compare.Unknown && r.DeltaCI != nil && !math.IsNaN(r.Delta) && !math.IsNaN(r.P):
		for _, w := range r.Warnings {
			if strings.HasPrefix(w, "unknown:") {
				return w
			}
		}
		return fmt.Sprintf("unknown: %+.1f%% [%+.1f%%, %+.1f%%] straddles the limit %s", r.Delta, r.DeltaCI.Lo, r.DeltaCI.Hi, cmpLimit(r))
	}
	return ""
}
