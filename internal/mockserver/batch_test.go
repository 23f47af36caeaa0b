package mockserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inferbench/inferbench/internal/capacity"
)

// TestSimulateByHand follows the model through a schedule worked out by hand: two slots, so the
// third request queues until the first leaves.
func TestSimulateByHand(t *testing.T) {
	c := Capacity{Slots: 2, PrefillMs: 10, TokenMs: 2, BatchSlowdown: 0.5}
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	got := c.Simulate([]Arrival{{At: 0, Tokens: 2}, {At: ms(1), Tokens: 3}, {At: ms(1), Tokens: 1}})
	// Iteration 1 at 0: admits request 0 alone (b=1, k=1): 12 ms, ends at 12 (its first token).
	// Iteration 2 at 12: admits request 1 (b=2, k=1): (2+10)×1.5 = 18 ms, ends at 30: request 0's
	//   second and last token, request 1's first.
	// Iteration 3 at 30: admits request 2 (b=2, k=1): 18 ms, ends at 48: request 1's second,
	//   request 2's only token.
	// Iteration 4 at 48: request 1 alone (b=1, k=0): 2 ms, ends at 50: its last.
	want := []Timing{
		{First: ms(12), End: ms(30), MaxGap: ms(18)},
		{First: ms(29), End: ms(49), MaxGap: ms(18)},
		{First: ms(47), End: ms(47)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timings (-want +got):\n%s", diff)
	}
	if s := c.Saturation(10); s <= 0 {
		t.Errorf("saturation %v", s)
	}
}

// TestScaleScalesCapacity: a model run twice as fast holds twice the rate.
func TestScaleScalesCapacity(t *testing.T) {
	obj, err := capacity.Objectives(map[string]float64{"ttft_ms.p90": 20}, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := Capacity{Slots: 4, PrefillMs: 2, TokenMs: 1, BatchSlowdown: 0.1}
	fast := c
	fast.Scale = 0.5
	obj2, _ := capacity.Objectives(map[string]float64{"ttft_ms.p90": 10}, 0)
	a := c.Attainment(40, 8, obj, 4000, []uint64{1})
	b := fast.Attainment(80, 8, obj2, 4000, []uint64{1})
	if a[0] != b[0] {
		t.Errorf("attainment at 40 req/s %v, at half the times and twice the rate %v: want equal", a, b)
	}
}

// TestTruthIsTheKnee: the model's attainment is above the target a little below its truth and
// below it a little above.
func TestTruthIsTheKnee(t *testing.T) {
	obj, _ := capacity.Objectives(map[string]float64{"ttft_ms.p90": 20, "e2e_ms.p90": 80}, 0)
	c := Capacity{Slots: 8, PrefillMs: 4, TokenMs: 1, BatchSlowdown: 0.05}
	truth := c.truth(32, obj, 10_000, []uint64{1})
	if math.Abs(truth-51.5)/51.5 > 0.03 {
		t.Errorf("truth %.2f req/s, want about 51.5 (Truth, with 20 times the requests, says 51.5)", truth)
	}
	seeds := []uint64{101, 102}
	for _, f := range []float64{0.9, 1.1} {
		a := c.Attainment(f*truth, 32, obj, 10_000, seeds)
		held := a[0] >= 0.9 && a[1] >= 0.9
		if held != (f < 1) {
			t.Errorf("at %.2f × the truth (%.2f req/s): attainment %v, held %v", f, truth, a, held)
		}
	}
}

// TestLiveFollowsModel: the live server's streams follow the model's schedule of the times it
// received the requests: each request's first and last token are due when Simulate says for the
// same arrivals, and none is sent before it is due. (How late they go out is the machine's: the
// kernel stamps when a request arrived, and a handler may run tens of milliseconds later on a
// loaded machine.)
func TestLiveFollowsModel(t *testing.T) {
	c := Capacity{Slots: 2, PrefillMs: 40, TokenMs: 10, BatchSlowdown: 0.2}
	s := New(Config{Capacity: c, Record: 100})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, err := s.Start(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 15 * time.Millisecond)
			resp := post(t, url+"/chat/completions", fmt.Sprintf(`{"model":"m","stream":true,"max_tokens":%d,"messages":[{"role":"user","content":"hi"}]}`, 3+i))
			events(t, resp.Body)
		}()
	}
	wg.Wait()
	em := s.Emissions()
	if len(em) != 5 {
		t.Fatalf("%d emissions, want 5", len(em))
	}
	// The model's epoch: the earliest arrival.
	epoch := em[0].Received
	for _, e := range em {
		if e.Received.Before(epoch) {
			epoch = e.Received
		}
	}
	byArrival := append([]Emission(nil), em...)
	for i := range byArrival {
		for j := i + 1; j < len(byArrival); j++ {
			if byArrival[j].Received.Before(byArrival[i].Received) {
				byArrival[i], byArrival[j] = byArrival[j], byArrival[i]
			}
		}
	}
	arr := make([]Arrival, len(byArrival))
	for i, e := range byArrival {
		arr[i] = Arrival{At: e.Received.Sub(epoch), Tokens: e.OutputTokens}
	}
	want := c.Simulate(arr)
	var bad []string
	for i, e := range byArrival {
		// The schedule is the model's to the nanosecond (rounded through the epoch).
		first, end := e.FirstDue.Sub(e.Received), e.EndDue.Sub(e.Received)
		if d := first - want[i].First; d < -time.Microsecond || d > time.Microsecond {
			bad = append(bad, fmt.Sprintf("request %d: first token due after %v, model %v", i, first, want[i].First))
		}
		if d := end - want[i].End; d < -time.Microsecond || d > time.Microsecond {
			bad = append(bad, fmt.Sprintf("request %d: last token due after %v, model %v", i, end, want[i].End))
		}
		// The stream follows it: nothing goes out before it is due.
		if e.FirstToken.Before(e.FirstDue) || e.End.Before(e.EndDue) {
			bad = append(bad, fmt.Sprintf("request %d: sent at %v and %v, before it was due", i, e.FirstToken.Sub(e.Received), e.End.Sub(e.Received)))
		}
	}
	if len(bad) > 0 {
		t.Error(strings.Join(bad, "\n"))
	}
	if st := s.Stats(); st.MaxActive != 5 || st.Completed != 5 {
		t.Errorf("stats %+v", st)
	}
}

// TestShortRate: with short_rate 1 every response stops before its max_tokens with reason stop,
// unless the request asks for exactly its length (ignore_eos, or min_tokens at max_tokens).
func TestShortRate(t *testing.T) {
	s := New(Config{ShortRate: 1, Record: 10})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, err := s.Start(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		extra string
		exact bool
	}{
		{"", false},                  // the model stops where it likes
		{`,"ignore_eos":true`, true}, // vLLM's and SGLang's extra parameter
		{`,"min_tokens":20`, true},   // vLLM's
		{`,"min_tokens":5`, false},   // fewer than asked: it may still stop early
	} {
		resp := post(t, url+"/completions", `{"model":"m","max_tokens":20,"prompt":"hi"`+tc.extra+`}`)
		var body struct {
			Choices []struct {
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := jsonDecode(resp, &body); err != nil {
			t.Fatal(err)
		}
		n, reason := body.Usage.CompletionTokens, body.Choices[0].FinishReason
		if tc.exact && (n != 20 || reason != "length") {
			t.Errorf("%s: %d tokens, %s; want 20, length", tc.extra, n, reason)
		}
		if !tc.exact && (n >= 20 || reason != "stop") {
			t.Errorf("%s: %d tokens, %s; want fewer than 20, stop", tc.extra, n, reason)
		}
	}
}

func jsonDecode(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }
