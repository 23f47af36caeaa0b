package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// TestCoalescedFirstToken checks ttft_coalesced_rate: a request whose first two
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
	c := newCollector(0, load.Config{})
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
	// The warning is the serving load's, which compares with what the server sent together
	// (figures.CoalescedWarning); the engine alone cannot tell and does not warn.
	if w := strings.Join(warnings(&r, true), "\n"); strings.Contains(w, "first tokens") {
		t.Errorf("engine warning about first tokens: %q", w)
	}
}

// TestClientBoundNotes: in a client_bound scenario every figure the client may have set says so
// beside it; before, only a warning below the table did.
func TestClientBoundNotes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := newCollector(0, load.Config{})
	ev := []subject.TokenEvent{{At: t0.Add(5 * time.Millisecond), Tokens: 1}, {At: t0.Add(9 * time.Millisecond), Tokens: 1}}
	c.Observe(load.Measure, subject.Observation{Start: t0, FirstToken: ev[0].At, End: ev[1].At, Tokens: ev, OutputTokens: 2}, nil)
	c.Extra(result.SectionClientBound, true)
	var r result.Scenario
	c.fill(&r, 0)
	for _, name := range []string{"ttft_ms", "itl_ms", "e2e_ms", "requests_per_s"} {
		if m := r.Metrics[name]; !strings.Contains(m.Note, "client_bound") {
			t.Errorf("%s: note %q, want client_bound", name, m.Note)
		}
	}
	if m := r.Metrics["output_tokens"]; strings.Contains(m.Note, "client_bound") {
		t.Errorf("output_tokens marked client_bound: %q", m.Note)
	}
}

// TestThinZeroIsDefault: every KeepSamples option means the same by 0 (DefaultKeepSamples) and
// by a negative number (all).
func TestThinZeroIsDefault(t *testing.T) {
	xs := make([]float64, DefaultKeepSamples+500)
	for _, tc := range []struct{ keep, want int }{{0, DefaultKeepSamples}, {-1, len(xs)}, {10, 10}, {len(xs) + 1, len(xs)}} {
		if got := len(Thin(xs, tc.keep)); got != tc.want {
			t.Errorf("Thin(%d samples, %d) kept %d, want %d", len(xs), tc.keep, got, tc.want)
		}
	}
}
