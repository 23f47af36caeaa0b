package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// TestCoalescedFirstToken checks ttft_coalesced_rate and its warning: a request whose first two
// content events share a receive time counts; one whose later events do does not.
func TestCoalescedFirstToken(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms ...int) []subject.TokenEvent {
		var ev []subject.TokenEvent
		for _, m := range ms {
			ev = append(ev, subject.TokenEvent{At: t0.Add(time.Duration(m) * time.Millisecond), Tokens: 1})
		}
		return ev
	}
	c := newCollector(0)
	for _, tokens := range [][]subject.TokenEvent{
		at(20, 20, 30), // first token read together with the second
		at(20, 30, 30), // later events together: TTFT is exact
		at(20, 30, 40),
		at(20),
	} {
		o := subject.Observation{Start: t0, FirstToken: tokens[0].At, End: tokens[len(tokens)-1].At, Tokens: tokens}
		c.Observe(load.Measure, o, nil)
	}
	var r result.Scenario
	c.fill(&r, 0)
	m, ok := r.Metrics["ttft_coalesced_rate"]
	if !ok || m.Value == nil || *m.Value != 0.25 {
		t.Fatalf("ttft_coalesced_rate %+v, want 0.25", m)
	}
	w := strings.Join(warnings(&r, true), "\n")
	if !strings.Contains(w, "25.0% of first tokens arrived in one read") {
		t.Errorf("no warning at 25%%: %q", w)
	}
	*m.Value = 0.01
	if w := strings.Join(warnings(&r, true), "\n"); strings.Contains(w, "first tokens") {
		t.Errorf("warning at 1%%: %q", w)
	}
}
