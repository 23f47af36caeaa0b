// This file holds the plan of one request: its length, time to first token, inter-token gaps and
// injected faults, drawn from the seeded distributions before anything is sent.

package mockserver

import (
	"math/rand/v2"
	"time"

	"github.com/inferbench/inferbench/internal/workload"
)

// plan is what the server will do for one request, drawn before anything is sent.
type plan struct {
	ttft       time.Duration
	gaps       []time.Duration // gaps[k]: wait before content event k+1 (k >= 0)
	events     int
	tokens     int
	finish     string
	cutAt      int // disconnect before this event (-1: never)
	errorAt    int // error event before this event (-1: never)
	stallAt    int // stall before this event (-1: never)
	fault      string
	errorState bool
	seq        uint64
	// batch, under the capacity model, delivers each content event's due time (closed after the
	// last); ttft and gaps are then unused.
	batch <-chan time.Time
}

func (s *Server) draw(seq uint64, maxTokens int, exact bool) plan {
	r := rand.New(rand.NewPCG(s.cfg.Seed, workload.Mix(seq)))
	p := plan{cutAt: -1, errorAt: -1, stallAt: -1, finish: "stop", seq: seq}
	// Every draw happens in the same order for every request, so a seed fixes them all.
	p.errorState = r.Float64() < s.cfg.ErrorRate
	n := maxTokens
	if !s.cfg.OutputTokens.IsZero() {
		n = s.cfg.OutputTokens.Int(r)
		if maxTokens > 0 && n >= maxTokens {
			n = maxTokens
		}
	} else if n <= 0 {
		n = 16
	}
	p.tokens = max(n, 1)
	if maxTokens > 0 && p.tokens == maxTokens {
		p.finish = "length"
	}
	// An early stop is drawn from a stream of its own, so that the other draws of a seed stay
	// as they were.
	if s.cfg.ShortRate > 0 && !exact && p.tokens > 1 {
		rs := rand.New(rand.NewPCG(s.cfg.Seed^0x5407, workload.Mix(seq)))
		if rs.Float64() < s.cfg.ShortRate {
			p.tokens, p.finish = 1+rs.IntN(p.tokens-1), "stop"
		}
	}
	tpe := s.cfg.TokensPerEvent
	p.events = (p.tokens + tpe - 1) / tpe
	p.ttft = ms(s.cfg.TTFT.Sample(r))
	if !s.cfg.ITL.IsZero() && p.events > 1 {
		p.gaps = make([]time.Duration, p.events-1)
		for i := range p.gaps {
			p.gaps[i] = ms(s.cfg.ITL.Sample(r))
		}
	}
	at := func() int { return r.IntN(p.events) }
	if r.Float64() < s.cfg.DisconnectRate {
		p.cutAt, p.fault = at(), "disconnect"
	} else if r.Float64() < s.cfg.ErrorEventRate {
		p.errorAt, p.fault = at(), "error_event"
	}
	if r.Float64() < s.cfg.StallRate && s.cfg.Stall > 0 {
		p.stallAt = at()
		if p.fault == "" {
			p.fault = "stall"
		}
	}
	return p
}

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
