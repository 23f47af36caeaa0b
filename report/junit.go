package report

import (
	"encoding/xml"
	"fmt"
	"io"
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
	Skipped *struct{}     `xml:"skipped,omitempty"`
	Out     string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// compareJUnit writes the comparison as JUnit XML: a suite per benchmark, a test case per metric
// row and per budget, failed when it regressed or exceeded its budget.
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
		if r.Failed() {
			c.Failure = &junitFailure{Type: r.Verdict, Message: strings.TrimSuffix(fmt.Sprintf("%s %s: %s (limit %s); %s", r.Metric, r.Verdict, cmpDelta(r), cmpLimit(r), r.Uncertified()), "; "),
				Text: strings.Join(r.Warnings, "\n")}
			s.Failures++
		}
		s.Tests++
		s.Cases = append(s.Cases, c)
	}
	for _, b := range rep.Budgets {
		s := suite(b.Benchmark)
		c := junitCase{Class: b.Benchmark, Name: fmt.Sprintf("%s budget %s %s %s", b.Scenario, b.Metric, b.Op, num(b.Limit)), Time: "0"}
		switch {
		case !b.Measured:
			c.Skipped = &struct{}{}
		case !b.OK:
			c.Failure = &junitFailure{Type: "budget", Message: fmt.Sprintf("%s = %s, budget %s %s (%s)", b.Metric, num(b.Actual), b.Op, num(b.Limit), b.Source)}
			s.Failures++
		}
		s.Tests++
		s.Cases = append(s.Cases, c)
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
