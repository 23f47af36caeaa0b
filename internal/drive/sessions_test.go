package drive

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/subject"
)

// talker is a subject of 3-turn sessions that notes when each request started and ended.
type talker struct {
	mu         sync.Mutex
	start, end map[int]time.Time
}

func (s *talker) Turns() int   { return 3 }
func (s *talker) Close() error { return nil }
func (s *talker) Do(_ context.Context, r subject.Request) (subject.Observation, error) {
	s.mu.Lock()
	s.start[r.Index] = time.Now()
	s.mu.Unlock()
	time.Sleep(time.Millisecond)
	o := stream(1, 2)
	s.mu.Lock()
	s.end[r.Index] = time.Now()
	s.mu.Unlock()
	return o, nil
}

// TestSessions: each session's turns go in order, each a think time after the previous answer;
// warm-up and measurement count whole sessions; the turns section has each turn's figures.
func TestSessions(t *testing.T) {
	s := &talker{start: map[int]time.Time{}, end: map[int]time.Time{}}
	rec := newRecorder()
	c := load.Config{Mode: load.ModeSessions, Concurrency: 2, ThinkTime: 5 * time.Millisecond, WarmupIterations: ptr(2), MeasurementIterations: ptr(7)}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := driveSessions(context.Background(), wrapped{s}, c, rec); err != nil {
		t.Fatal(err)
	}
	// 1 warm-up session and 3 measured ones: 12 requests.
	if len(rec.obs[load.Warmup]) != 3 || len(rec.obs[load.Measure]) != 9 || len(s.start) != 12 {
		t.Fatalf("%d warm-up, %d measured, %d sent; want 3, 9, 12", len(rec.obs[load.Warmup]), len(rec.obs[load.Measure]), len(s.start))
	}
	for i := range 12 {
		if i%3 == 0 {
			continue
		}
		if gap := s.start[i].Sub(s.end[i-1]); gap < c.ThinkTime {
			t.Errorf("request %d started %v after turn %d ended, want the think time %v", i, gap, i%3-1, c.ThinkTime)
		}
	}
	turns, ok := rec.extra[result.SectionTurns].([]result.TurnStat)
	if !ok || len(turns) != 3 {
		t.Fatalf("turns section %#v", rec.extra[result.SectionTurns])
	}
	for k, st := range turns {
		if st.Turn != k+1 || st.Requests != 3 || st.TTFTP50 <= 0 {
			t.Errorf("turn %d: %+v", k+1, st)
		}
	}
}
