package drive

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/inferbench/inferbench/internal/capacity"
	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// TestCapacityStepsStopWhenDecided: a step whose verdict is known sends no more: each of these
// steps, every request meeting the SLO, passes at its second look (80 requests without a miss
// put the attainment above 0.9; the third when the fake's times drift up on a loaded machine)
// and sends its warm-up and about that many requests (those in flight then also end), not its
// most (1280); the search reports its figures, its
// section and a row of the sweep table per step.
func TestCapacityStepsStopWhenDecided(t *testing.T) {
	s := &streamer{tokens: 2}
	c := load.Config{Mode: load.ModeCapacity, SLO: map[string]float64{"ttft_ms.p90": 500}, Seed: 1,
		Capacity: &load.CapacityConfig{Start: 200, MinRequests: 40, MaxRequests: 1280, WarmupRequests: 5, MaxSteps: 3}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	if err := driveCapacity(context.Background(), s, c, rec); err != nil {
		t.Fatal(err)
	}
	res, ok := rec.extra[capacity.Section].(capacity.Result)
	if !ok || len(res.Steps) != 3 {
		t.Fatalf("capacity section %+v", rec.extra[capacity.Section])
	}
	for i, st := range res.Steps {
		if st.Verdict != capacity.Pass || st.Requests > 160 || st.Rate != 200*float64(int(1)<<i) {
			t.Errorf("step %d: %+v, want a pass at the second look at %v req/s", i, st, 200*float64(int(1)<<i))
		}
	}
	if calls := s.calls.Load(); calls > 3*(5+160+40) {
		t.Errorf("%d calls for 3 steps of 5 warm-up and at most 160 measured requests: the steps did not stop sending", calls)
	}
	rows, _ := rec.extra[result.SectionSweep].([]result.SweepStep)
	if len(rows) != 3 || !strings.HasPrefix(rows[0].Name, "capacity=200") {
		t.Errorf("sweep rows %+v", rows)
	}
	if rec.values["capacity_lower_rps"] != 800 || rec.values["capacity_rps"] != 800 || rec.values["capacity_steps"] != 3 {
		t.Errorf("values %v", rec.values)
	}
	if len(rec.warnings) == 0 || !strings.Contains(strings.Join(rec.warnings, "\n"), "every step passed") {
		t.Errorf("warnings %q, want that every step passed", rec.warnings)
	}
}

// TestCapacityValidate: mode capacity needs percentile SLOs.
func TestCapacityValidate(t *testing.T) {
	for _, tc := range []struct {
		c    load.Config
		want string
	}{
		{load.Config{Mode: load.ModeCapacity, SLO: map[string]float64{"ttft_ms.max": 5}}, "not a percentile"},
		{load.Config{Mode: load.ModeCapacity, SLO: map[string]float64{"ttft_ms": 5}, Capacity: &load.CapacityConfig{Tolerance: 2}}, "tolerance"},
	} {
		if err := tc.c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.c, err, tc.want)
		}
	}
	// Without SLOs the configuration is whole (a definition may bring them), but no search
	// starts.
	c := load.Config{Mode: load.ModeCapacity}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := driveCapacity(context.Background(), &streamer{}, c, newRecorder()); err == nil || !strings.Contains(err.Error(), "at least one SLO") {
		t.Errorf("a search without SLOs: error %v", err)
	}
}

// slowSubject is a client that sends each request late: it waits before its subject's Do, which
// stamps the start.
type slowSubject struct {
	*streamer
	late time.Duration
}

func (s *slowSubject) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	time.Sleep(s.late)
	return s.streamer.Do(ctx, r)
}

// TestCapacityClientBoundStops: a client that sends every request at least 5 ms late (its
// schedule lag, an eighth of the 40 ms limit) paces every step: the search runs the first rate
// twice, takes no verdict from either, judges only below it, and stops when half the rate is
// paced too with no step passed, with an error naming the rate, the lag and a hint; run.json's
// capacity section keeps the steps, each marked client_bound, and the stop in its warnings, and
// there is no capacity to keep or gate on. Read as the server's, the steps passed (the requests
// meet the limit once sent) at rates the server never saw.
func TestCapacityClientBoundStops(t *testing.T) {
	s := &slowSubject{streamer: &streamer{tokens: 2}, late: 5 * time.Millisecond}
	c := load.Config{Mode: load.ModeCapacity, SLO: map[string]float64{"ttft_ms.p90": 40}, Seed: 1,
		Capacity: &load.CapacityConfig{Start: 100, MinRequests: 40, MaxRequests: 160, WarmupRequests: 5, MaxSteps: 4}}
	rec := newRecorder()
	err := driveCapacity(context.Background(), s, c, rec)
	var cb *capacity.ClientBoundError
	if !errors.As(err, &cb) || cb.Rate != 50 || !strings.Contains(err.Error(), "schedule lag p99") || !strings.Contains(err.Error(), "quieter machine") {
		t.Fatalf("error %v, want the search stopped at 50 req/s, naming the schedule lag, with a hint", err)
	}
	res, ok := rec.extra[capacity.Section].(capacity.Result)
	if !ok || len(res.Steps) != 4 {
		t.Fatalf("capacity section %+v, want two steps at 100 req/s and two at 50", rec.extra[capacity.Section])
	}
	for i, st := range res.Steps {
		if st.Rate != []float64{100, 100, 50, 50}[i] || st.Verdict != capacity.Unknown || !strings.Contains(st.ClientBound, "schedule lag p99") {
			t.Errorf("step %+v, want not yet known and client_bound", st)
		}
	}
	for _, v := range []string{"capacity_rps", "capacity_lower_rps"} {
		if _, ok := rec.values[v]; ok {
			t.Errorf("values %v: a search the client stopped kept %s", rec.values, v)
		}
	}
	if len(res.Warnings) == 0 || !strings.Contains(strings.Join(res.Warnings, "\n"), "client_bound twice") {
		t.Errorf("the section's warnings %q do not say why the search stopped", res.Warnings)
	}
	if b, _ := rec.extra[result.SectionClientBound].(bool); !b {
		t.Error("the scenario is not marked client_bound")
	}
}

// mergingReader is a client whose late reads (6 ms, its read_delay_ms) take its last two tokens in
// one read: its gaps read as zero, its first tokens apart.
type mergingReader struct{ streamer }

func (m *mergingReader) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	o := subject.Observation{Scheduled: r.Scheduled, Start: time.Now()}
	time.Sleep(time.Millisecond)
	first := time.Now()
	time.Sleep(time.Millisecond)
	last := time.Now()
	o.Tokens = []subject.TokenEvent{{At: first, Tokens: 1}, {At: last, Tokens: 1}, {At: last, Tokens: 1}}
	o.FirstToken, o.End, o.OutputTokens = first, last, 3
	o.Values = map[string]float64{figures.ValueReadDelay: 6}
	return o, nil
}

// TestCapacityClientDelayByObjective: a client's delay stops a search only where it can move what
// the search judges. Late reads that merge gaps (6 ms, above a tenth of the 40 ms limits) move
// itl_ms, not the time to first token: a search on ttft_ms goes on (the scenario still warns
// client_bound), one on itl_ms stops.
func TestCapacityClientDelayByObjective(t *testing.T) {
	for _, tc := range []struct {
		slo   string
		stops bool
	}{{"ttft_ms.p90", false}, {"itl_ms.p90", true}} {
		c := load.Config{Mode: load.ModeCapacity, SLO: map[string]float64{tc.slo: 40}, Seed: 1,
			Capacity: &load.CapacityConfig{Start: 400, MinRequests: 40, MaxRequests: 40, WarmupRequests: 5, MaxSteps: 2}}
		rec := newRecorder()
		err := driveCapacity(context.Background(), &mergingReader{}, c, rec)
		var cb *capacity.ClientBoundError
		if stopped := errors.As(err, &cb); stopped != tc.stops {
			t.Errorf("%s: error %v; want the search stopped %v", tc.slo, err, tc.stops)
		}
		if b, _ := rec.extra[result.SectionClientBound].(bool); !b {
			t.Errorf("%s: the scenario is not marked client_bound (warnings %q)", tc.slo, rec.warnings)
		}
	}
}

// statusErr is a server's error answer, counted by its kind as the openai subject's are.
type statusErr struct{ code int }

func (e statusErr) Error() string { return fmt.Sprintf("HTTP %d", e.code) }
func (e statusErr) Kind() string  { return fmt.Sprintf("http_%d", e.code) }

// refused is a dial to a port nothing listens on.
var refused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

// emptyStreams answers every request with a stream of no content (HTTP 200, no token).
type emptyStreams struct{ calls atomic.Int64 }

func (s *emptyStreams) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	s.calls.Add(1)
	now := time.Now()
	return subject.Observation{Scheduled: r.Scheduled, Start: now, End: now.Add(time.Millisecond), Streamed: true}, nil
}
func (s *emptyStreams) Close() error { return nil }

// described names its server, as the openai subject's description does.
type described struct{ subject.Subject }

func (described) Describe() map[string]any { return map[string]any{"url": "http://127.0.0.1:9/v1"} }

// TestCapacityStopsOnServerFailures: a search whose server is gone (connections refused), fails
// every request (HTTP 500), nearly every one (1 in 200 answered) or answers with no content
// stops at that step with an error naming the server and what its requests got, keeps its
// steps, and stores no capacity. It halved the rate and sent on (hours for 12 steps at low
// rates), then stored a capacity from requests that all failed.
func TestCapacityStopsOnServerFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		subj   func(calls *atomic.Int64) subject.Subject
		want   []string // in the error
		refuse bool
		most   int64 // calls at most
	}{
		// the server is killed after the first step's requests: the next are refused
		{name: "killed mid-search", subj: func(calls *atomic.Int64) subject.Subject {
			return &streamer{tokens: 2, fail: func(int) error {
				if calls.Add(1) > 120 {
					return refused
				}
				return nil
			}}
		}, want: []string{"the server at http://127.0.0.1:9/v1 is gone (connections refused)", "connection refused ×"}, refuse: true, most: 120 + giveUp + 40},
		// every request an HTTP 500: the first giveUp end the step
		{name: "HTTP 500", subj: func(*atomic.Int64) subject.Subject {
			return &streamer{tokens: 2, fail: func(int) error { return statusErr{500} }}
		}, want: []string{"fails every request", "http_500 ×", "first: HTTP 500"}, most: giveUp + 40},
		// one request in 200 answered: the step runs to its verdict, then the search stops
		{name: "nearly every request failed", subj: func(calls *atomic.Int64) subject.Subject {
			return &streamer{tokens: 2, fail: func(int) error {
				if calls.Add(1)%200 == 1 {
					return nil
				}
				return statusErr{503}
			}}
		}, want: []string{"fails every request", "http_503 ×"}, most: 5 + 1280 + 40},
		// a stream of 200s with no content: a request with no output failed
		{name: "no output", subj: func(*atomic.Int64) subject.Subject { return &emptyStreams{} },
			want: []string{"fails every request", "no output (no tokens) ×"}, most: giveUp + 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			s := described{tc.subj(&calls)}
			c := load.Config{Mode: load.ModeCapacity, SLO: map[string]float64{"ttft_ms.p90": 500}, Seed: 1,
				Capacity: &load.CapacityConfig{Start: 200, MinRequests: 40, MaxRequests: 1280, WarmupRequests: 5, MaxSteps: 12}}
			rec := newRecorder()
			err := driveCapacity(context.Background(), s, c, rec)
			var sf *load.ServerFailingError
			if !errors.As(err, &sf) || sf.Refused != tc.refuse {
				t.Fatalf("error %v, want the search stopped for the server's failures (refused %v)", err, tc.refuse)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want it to say %q", err, w)
				}
			}
			if _, ok := rec.values["capacity_rps"]; ok {
				t.Errorf("capacity_rps %v stored from a search the server's failures stopped", rec.values["capacity_rps"])
			}
			if _, ok := rec.values["capacity_lower_rps"]; ok {
				t.Errorf("capacity_lower_rps stored")
			}
			if rows, _ := rec.extra[result.SectionSweep].([]result.SweepStep); len(rows) == 0 {
				t.Error("no step kept in the sweep table")
			}
			n := calls.Load()
			if e, ok := s.Subject.(*emptyStreams); ok {
				n = e.calls.Load()
			} else if st := s.Subject.(*streamer); st != nil {
				n = st.calls.Load()
			}
			if n > tc.most {
				t.Errorf("%d requests sent, want at most %d: the search went on", n, tc.most)
			}
		})
	}
}

// TestCapacityNoPassNoValue: a search in which no step passed (every request misses its limit)
// stores no capacity_rps or capacity_lower_rps (it stored 0, or the fit's crossing, which read
// as a capacity), keeps its steps and says so in a warning.
func TestCapacityNoPassNoValue(t *testing.T) {
	// A limit of 400 ms leaves the client 40 ms of its own delays before the search calls itself
	// client-bound: with 40 ms, a machine busy with the rest of the suite tripped it.
	s := &streamer{tokens: 2, ttft: func(int) time.Duration { return time.Second }}
	c := load.Config{Mode: load.ModeCapacity, SLO: map[string]float64{"ttft_ms.p90": 400}, Seed: 1,
		Capacity: &load.CapacityConfig{Start: 40, MinRequests: 40, MaxRequests: 40, WarmupRequests: 5, MaxSteps: 2}}
	rec := newRecorder()
	if err := driveCapacity(context.Background(), s, c, rec); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"capacity_rps", "capacity_lower_rps"} {
		if v, ok := rec.values[m]; ok {
			t.Errorf("%s = %v stored, though no step passed", m, v)
		}
	}
	res, ok := rec.extra[capacity.Section].(capacity.Result)
	if !ok || len(res.Steps) != 2 || rec.values["capacity_steps"] != 2 {
		t.Errorf("capacity section %+v, steps %v", rec.extra[capacity.Section], rec.values["capacity_steps"])
	}
	if !strings.Contains(strings.Join(rec.warnings, "\n"), "no step passed") {
		t.Errorf("warnings %q, want that no step passed", rec.warnings)
	}
}
