package web

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/result"
)

// LiveState is what the live view shows of the run in progress (or the last one seen).
type LiveState struct {
	RunID     string         `json:"run_id,omitempty"`
	StartedAt time.Time      `json:"started_at,omitzero"`
	Running   bool           `json:"running"`
	Current   string         `json:"current,omitempty"` // the scenario being measured
	Total     int            `json:"total,omitempty"`   // 0 when unknown
	Done      int            `json:"done"`
	OK        int            `json:"ok"`
	Failed    int            `json:"failed"`
	Skipped   int            `json:"skipped"`
	Scenarios []LiveScenario `json:"scenarios"` // finished ones, newest last
	Updated   time.Time      `json:"updated"`
}

// LiveScenario is one finished scenario's headline figures.
type LiveScenario struct {
	ID         string   `json:"id"`
	Status     string   `json:"status"`
	Metric     string   `json:"metric,omitempty"` // latency_ms or e2e_ms
	P50        *float64 `json:"p50,omitempty"`
	P95        *float64 `json:"p95,omitempty"`
	Throughput *float64 `json:"throughput,omitempty"` // items/s or output tokens/s
	Note       string   `json:"note,omitempty"`
}

// maxLiveScenarios bounds the finished scenarios kept in the live state.
const maxLiveScenarios = 500

// Hub holds the live state and fans its changes out to server-sent-event subscribers. It is safe
// for concurrent use; a slow subscriber misses intermediate states, never the latest one. Its
// methods are named for what they do to the state, not for a run's events (run/observer.go), so
// that it takes part in none: LiveRun is the observer that feeds it.
type Hub struct {
	mu    sync.Mutex
	state LiveState
	subs  map[chan []byte]struct{}
}

// NewHub returns a hub with no run.
func NewHub() *Hub {
	return &Hub{subs: map[chan []byte]struct{}{}, state: LiveState{Scenarios: []LiveScenario{}}}
}

// State returns a copy of the current state.
func (h *Hub) State() LiveState {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.state
	s.Scenarios = append([]LiveScenario(nil), s.Scenarios...)
	return s
}

// Reset resets the state for a new run.
func (h *Hub) Reset(id string, at time.Time, total int) {
	h.update(func(s *LiveState) {
		*s = LiveState{RunID: id, StartedAt: at, Running: true, Total: total, Scenarios: []LiveScenario{}}
	})
}

// SetCurrent marks a scenario as the one being measured.
func (h *Hub) SetCurrent(id string) {
	h.update(func(s *LiveState) { s.Running, s.Current = true, id })
}

// Add records a finished scenario.
func (h *Hub) Add(sc *result.Scenario) {
	h.update(func(s *LiveState) { s.add(sc) })
}

// Finish marks the run as over.
func (h *Hub) Finish() {
	h.update(func(s *LiveState) { s.Running, s.Current = false, "" })
}

// SetRun replaces the state with a run read from disk (serve's watcher).
func (h *Hub) SetRun(r *result.Run) {
	h.update(func(s *LiveState) {
		current, total := "", 0
		if s.RunID == r.ID {
			current, total = s.Current, s.Total
		}
		*s = LiveState{RunID: r.ID, StartedAt: r.StartedAt, Running: r.Partial && r.FinishedAt.IsZero(), Current: current, Total: total, Scenarios: []LiveScenario{}}
		for i := range r.Scenarios {
			s.add(&r.Scenarios[i])
		}
		if !s.Running {
			s.Current = ""
		}
	})
}

func (s *LiveState) add(sc *result.Scenario) {
	ls := LiveScenario{ID: sc.ID(), Status: sc.Status}
	for _, m := range []string{"latency_ms", "e2e_ms"} {
		if sum := sc.Metrics[m].Summary; sum != nil {
			p50, p95 := sum.Median, sum.P95
			ls.Metric, ls.P50, ls.P95 = m, &p50, &p95
		}
	}
	for _, m := range []string{"output_tokens_per_s", "throughput_ips"} {
		if v, ok := sc.Metrics[m].Center(); ok {
			ls.Throughput = &v
			break
		}
	}
	switch sc.Status {
	case result.StatusOK:
		s.OK++
	case result.StatusFailed:
		s.Failed++
		ls.Note = sc.Error
	case result.StatusSkipped:
		s.Skipped++
		ls.Note = sc.SkipReason
	}
	s.Done++
	if s.Current == sc.ID() {
		s.Current = ""
	}
	s.Scenarios = append(s.Scenarios, ls)
	if len(s.Scenarios) > maxLiveScenarios {
		s.Scenarios = s.Scenarios[len(s.Scenarios)-maxLiveScenarios:]
	}
}

func (h *Hub) update(f func(*LiveState)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(&h.state)
	h.state.Updated = time.Now().UTC()
	b, err := finite.Marshal(h.state)
	if err != nil {
		return
	}
	for ch := range h.subs {
		select {
		case ch <- b:
		default: // the subscriber is behind; it gets a later state
		}
	}
}

func (h *Hub) subscribe() (chan []byte, []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := make(chan []byte, 8)
	h.subs[ch] = struct{}{}
	b, _ := finite.Marshal(h.state)
	return ch, b
}

func (h *Hub) unsubscribe(ch chan []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, ch)
}

// keepAlive is how often an idle event stream gets a comment, so proxies keep it open.
const keepAlive = 15 * time.Second

// ServeEvents streams the state as server-sent events: "state" at once, then one per change.
func (h *Hub) ServeEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ch, first := h.subscribe()
	defer h.unsubscribe(ch)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	write := func(b []byte) bool {
		_, err := fmt.Fprintf(w, "event: state\ndata: %s\n\n", b)
		fl.Flush()
		return err == nil
	}
	if !write(first) {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case b := <-ch:
			if !write(b) {
				return
			}
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		}
	}
}
