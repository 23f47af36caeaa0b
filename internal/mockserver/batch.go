// This file holds the server's capacity model: continuous batching in iterations over a fixed
// number of slots, with a FIFO queue in front. The same code times the live server's streams
// (engine) and simulates the model over a list of arrivals (Simulate), from which Truth computes
// the highest Poisson rate the model sustains within given SLOs: tests check a capacity search's
// answer against it.

package mockserver

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/inferbench/inferbench/internal/base/precise"
	"github.com/inferbench/inferbench/internal/base/unit"
	"github.com/inferbench/inferbench/internal/capacity"
)

// Capacity is the server's capacity model, as an inference server batches: at most Slots
// sequences are generated at once; a request that finds them all taken waits in a FIFO queue.
// The server runs iterations back to back while it has work. An iteration starts by admitting
// queued requests into free slots, each of which reads its prompt (prefill); every sequence in
// the batch then gets one token at the iteration's end (an admitted one its first). An iteration
// with b sequences, k of them admitted, lasts
//
//	(TokenMs + k × PrefillMs) × (1 + BatchSlowdown × (b - 1)) × Scale
//
// so both the prefill and the per-token time grow with the batch. A request leaves when it has
// its tokens (its plan's length: the request's max_tokens or output_tokens). With Slots 0 the
// model is off and each request keeps its own TTFT and ITL draws.
type Capacity struct {
	Slots         int     `yaml:"slots" json:"slots,omitempty"`
	PrefillMs     float64 `yaml:"prefill_ms" json:"prefill_ms,omitempty"`
	TokenMs       float64 `yaml:"token_ms" json:"token_ms,omitempty"`
	BatchSlowdown float64 `yaml:"batch_slowdown" json:"batch_slowdown,omitempty"`
	// Scale multiplies every time of the model (default 1): 0.1 runs the same server ten times
	// faster, so its capacity is ten times the rate.
	Scale float64 `yaml:"scale" json:"scale,omitempty"`
}

// On reports whether the model is in use.
func (c Capacity) On() bool { return c.Slots > 0 }

// Validate reports a model that cannot run.
func (c Capacity) Validate() error {
	if c.Slots < 0 {
		return fmt.Errorf("mockserver slots %d is negative", c.Slots)
	}
	if !c.On() {
		return nil
	}
	for name, v := range map[string]float64{"prefill_ms": c.PrefillMs, "token_ms": c.TokenMs, "batch_slowdown": c.BatchSlowdown, "scale": c.Scale} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("mockserver %s: %v must be a number at or above 0", name, v)
		}
	}
	if c.TokenMs == 0 && c.PrefillMs == 0 {
		return fmt.Errorf("mockserver slots %d: the model needs token_ms or prefill_ms above 0 (a server of no time has no capacity)", c.Slots)
	}
	return nil
}

func (c Capacity) scale() float64 {
	if c.Scale <= 0 {
		return 1
	}
	return c.Scale
}

// iteration is how long an iteration lasts with b sequences, k of them admitted in it.
func (c Capacity) iteration(b, k int) time.Duration {
	ms := (c.TokenMs + float64(k)*c.PrefillMs) * (1 + c.BatchSlowdown*float64(b-1)) * c.scale()
	return time.Duration(ms * float64(time.Millisecond))
}

// seq is one request in the model: queued, then in a slot until its tokens are out.
type seq struct {
	arrived time.Duration // since the model's epoch
	left    int           // tokens still to generate
	first   bool          // no token yet
	// emit is told each token's time; last is true for the request's last token.
	emit func(at time.Duration, last bool)
}

// batcher is the model's state: the queue and the slots. It is not safe for concurrent use.
type batcher struct {
	c      Capacity
	queue  []*seq
	active []*seq
}

// busy reports whether an iteration has work.
func (b *batcher) busy() bool { return len(b.active) > 0 || len(b.queue) > 0 }

// admit fills free slots from the queue, in arrival order, with requests that arrived by t, and
// returns the iteration's length.
func (b *batcher) admit(t time.Duration) time.Duration {
	k := 0
	for len(b.active) < b.c.Slots && len(b.queue) > 0 && b.queue[0].arrived <= t {
		b.active = append(b.active, b.queue[0])
		b.queue[0] = nil
		b.queue = b.queue[1:]
		k++
	}
	return b.c.iteration(len(b.active), k)
}

// end finishes an iteration at t: every sequence in the batch gets a token, and those done leave.
func (b *batcher) end(t time.Duration) {
	kept := b.active[:0]
	for _, s := range b.active {
		s.left--
		s.first = false
		s.emit(t, s.left <= 0)
		if s.left > 0 {
			kept = append(kept, s)
		}
	}
	clear(b.active[len(kept):])
	b.active = kept
}

// Arrival is one request of a simulation: when it arrives (from the simulation's start) and the
// tokens it asks for.
type Arrival struct {
	At     time.Duration
	Tokens int
}

// Timing is what the model did with one request, from its arrival: its first token, its last,
// and the longest gap between two of its tokens (0 with one token).
type Timing struct {
	First, End, MaxGap time.Duration
}

// Simulate runs the model over arrivals (sorted by time) and returns each request's timing.
func (c Capacity) Simulate(arrivals []Arrival) []Timing {
	out := make([]Timing, len(arrivals))
	b := &batcher{c: c}
	seqs := make([]seq, len(arrivals))
	for i := range arrivals {
		i := i
		var last time.Duration
		started := false
		seqs[i] = seq{arrived: arrivals[i].At, left: max(arrivals[i].Tokens, 1), first: true, emit: func(at time.Duration, done bool) {
			tm := &out[i]
			if !started {
				started = true
				tm.First = at - arrivals[i].At
			} else {
				tm.MaxGap = max(tm.MaxGap, at-last)
			}
			last = at
			if done {
				tm.End = at - arrivals[i].At
			}
		}}
	}
	var t time.Duration
	next := 0
	for next < len(arrivals) || b.busy() {
		if !b.busy() {
			t = max(t, arrivals[next].At)
		}
		for next < len(arrivals) && arrivals[next].At <= t {
			b.queue = append(b.queue, &seqs[next])
			next++
		}
		d := b.admit(t)
		if len(b.active) == 0 {
			continue
		}
		t += d
		b.end(t)
	}
	return out
}

// Measures returns the figures of a simulated request as a capacity search judges them (ms).
func (tm Timing) Measures(tokens int) capacity.Measures {
	m := capacity.Measures{TTFT: unit.MS(tm.First), E2E: unit.MS(tm.End), ITLMax: math.NaN(), TPOT: math.NaN()}
	m.TTFTSched, m.E2ESched = m.TTFT, m.E2E
	if tokens > 1 {
		m.ITLMax = unit.MS(tm.MaxGap)
		m.TPOT = unit.MS(tm.End-tm.First) / float64(tokens-1)
	}
	return m
}

// Poisson returns n arrivals of a Poisson process at rate requests per second, each asking for
// tokens, seeded.
func Poisson(rate float64, n, tokens int, seed uint64) []Arrival {
	r := rand.New(rand.NewPCG(seed, 0xa771fa1))
	out := make([]Arrival, n)
	t := 0.0
	for i := range out {
		t += r.ExpFloat64() / rate
		out[i] = Arrival{At: time.Duration(t * 1e9), Tokens: tokens}
	}
	return out
}

// Attainment is the steady-state fraction of requests meeting each objective at a Poisson rate,
// simulated over n requests (after n/10 of warm-up) for each seed and pooled.
func (c Capacity) Attainment(rate float64, tokens int, objectives []capacity.Objective, n int, seeds []uint64) []float64 {
	met := make([]int, len(objectives))
	total := 0
	warm := n / 10
	for _, seed := range seeds {
		arr := Poisson(rate, n+warm, tokens, seed)
		for i, tm := range c.Simulate(arr)[warm:] {
			m := tm.Measures(arr[warm+i].Tokens)
			for j, o := range objectives {
				if o.Met(m) {
					met[j]++
				}
			}
			total++
		}
	}
	out := make([]float64, len(objectives))
	for j := range out {
		out[j] = float64(met[j]) / float64(total)
	}
	return out
}

// Truth is the model's capacity under objectives for requests of tokens tokens: the highest
// Poisson rate at which every objective's steady-state attainment is at least its target,
// found by bisection on Attainment (over 200,000 requests of 4 seeds) to 0.1%. It is a figure of
// the model alone, deterministic, for tests to check a search against.
func (c Capacity) Truth(tokens int, objectives []capacity.Objective) float64 {
	return c.truth(tokens, objectives, 50_000, []uint64{11, 12, 13, 14})
}

func (c Capacity) truth(tokens int, objectives []capacity.Objective, n int, seeds []uint64) float64 {
	holds := func(rate float64) bool {
		for j, a := range c.Attainment(rate, tokens, objectives, n, seeds) {
			if a < objectives[j].Target {
				return false
			}
		}
		return true
	}
	hi, lo := c.Saturation(tokens)*1.5, 0.0
	for hi-lo > 0.001*hi {
		mid := (lo + hi) / 2
		if holds(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// Saturation is the rate at which the model's slots are always full with requests of tokens
// tokens: Slots sequences every tokens iterations of a full batch, one admitted in every
// tokens/Slots of them. No rate above it is sustainable.
func (c Capacity) Saturation(tokens int) float64 {
	tokens = max(tokens, 1)
	admitted := float64(c.Slots) / float64(tokens) // per iteration, on average
	it := (c.TokenMs + admitted*c.PrefillMs) * (1 + c.BatchSlowdown*float64(c.Slots-1)) * c.scale() / 1e3
	return admitted / it
}

// engine runs the model in real time for the live server: a goroutine runs the iterations on an
// absolute schedule (an iteration starts when the one before was due to end, however late the
// goroutine woke), and each request's handler is sent its tokens' due times. The goroutine runs
// while the model has work and ends when it is idle; the next request starts another.
type engine struct {
	epoch   time.Time
	mu      sync.Mutex
	b       batcher
	t       time.Duration // the model's clock: when the last iteration was due to end
	running bool
}

func newEngine(c Capacity) *engine { return &engine{epoch: time.Now(), b: batcher{c: c}} }

// join queues a request received at received for tokens tokens; its tokens' due times arrive on
// the returned channel, which is closed after the last.
func (e *engine) join(received time.Time, tokens int) <-chan time.Time {
	ch := make(chan time.Time, max(tokens, 1))
	s := &seq{arrived: received.Sub(e.epoch), left: max(tokens, 1), first: true}
	s.emit = func(at time.Duration, last bool) {
		ch <- e.epoch.Add(at)
		if last {
			close(ch)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	// Requests queue in arrival order; one whose handler ran late goes behind those queued
	// before it arrived.
	i := sort.Search(len(e.b.queue), func(i int) bool { return e.b.queue[i].arrived > s.arrived })
	e.b.queue = append(e.b.queue, nil)
	copy(e.b.queue[i+1:], e.b.queue[i:])
	e.b.queue[i] = s
	if !e.running {
		e.running = true
		go e.run()
	}
	return ch
}

func (e *engine) run() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		e.mu.Lock()
		if !e.b.busy() {
			e.running = false
			e.mu.Unlock()
			return
		}
		// An idle server starts on the first arrival; a busy one when its last iteration ended.
		if len(e.b.active) == 0 {
			e.t = max(e.t, e.b.queue[0].arrived)
		}
		d := e.b.admit(e.t)
		e.t += d
		t := e.t
		e.mu.Unlock()
		precise.Until(context.Background(), timer, e.epoch.Add(t))
		e.mu.Lock()
		e.b.end(t)
		e.mu.Unlock()
	}
}

// Prober returns a capacity.Prober that runs each step on the model in simulated time rather
// than on a live server: the step's Warmup Poisson arrivals unmeasured, then up to its Max
// measured ones, each asking for tokens, starting from an idle server as a live step does. Step k of the
// search draws its arrivals from seed and k. virtual, when not nil, adds up the simulated seconds
// the steps sent requests for (what the search would take against a live server of this model).
func (c Capacity) Prober(tokens int, seed uint64, virtual *float64) capacity.Prober {
	step := uint64(0)
	return func(ctx context.Context, t *capacity.Trial) error {
		step++
		warm := t.Warmup()
		arr := Poisson(t.Rate(), warm+t.Max(), tokens, seed*0x9e3779b97f4a7c15^(step+0x632be59bd9b4e019))
		tms := c.Simulate(arr)
		sent := arr[len(arr)-1].At
		for i := warm; i < len(arr); i++ {
			if t.Observe(i-warm, tms[i].Measures(arr[i].Tokens)) {
				sent = arr[i].At
				break
			}
		}
		if virtual != nil {
			*virtual += sent.Seconds()
		}
		return ctx.Err()
	}
}
