package figures

import (
	"slices"
	"time"
)

// spanLimit bounds the request spans a Figures keeps for finding the steady window: past it the
// window is found from the first spanLimit requests' times and the rest are counted as outside.
const spanLimit = 1 << 17

// span is one measured request's time at the server: from its start to its end.
type span struct{ start, end time.Time }

// Steady is the steady-state window of a serving load's measured phase, found from the data: the
// time during which the requests in flight stood at the load's level (the target concurrency of
// a closed loop; an open loop's time-weighted median), with the ramp-up before it and the drain
// after it excluded.
type Steady struct {
	Start, End time.Time
	// Level is the number of requests in flight that counts as steady.
	Level int
	// Inside counts the measured requests that started inside the window, of Total.
	Inside, Total int
}

// Outside returns the share of measured requests that started outside the window (ramp-up and
// drain): figures over all measured requests take them in.
func (s Steady) Outside() float64 {
	if s.Total == 0 {
		return 0
	}
	return 1 - float64(s.Inside)/float64(s.Total)
}

// addSpan keeps a measured request's span.
func (f *Figures) addSpan(start, end time.Time) {
	f.spanN++
	if len(f.spans) < spanLimit && !end.Before(start) {
		f.spans = append(f.spans, span{start, end})
	}
}

// Steady finds the steady window of the measured requests: from the first time the requests in
// flight reached the level to the last time they stood at it. The level is target (a closed
// loop's concurrency) when the requests ever reached it, else the time-weighted median of the
// requests in flight. ok is false with fewer than two requests.
func (f *Figures) Steady(target int) (Steady, bool) {
	if len(f.spans) < 2 {
		return Steady{}, false
	}
	type edge struct {
		at time.Time
		d  int
	}
	edges := make([]edge, 0, 2*len(f.spans))
	for _, s := range f.spans {
		edges = append(edges, edge{s.start, 1}, edge{s.end, -1})
	}
	// Ends before starts at one instant: a slot freed and taken again is not two in flight.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.d - b.d
	})
	inflight := make([]int, len(edges)) // after each edge
	n, peak := 0, 0
	for i, e := range edges {
		n += e.d
		inflight[i] = n
		peak = max(peak, n)
	}
	level := target
	if level <= 0 || peak < level {
		level = weightedMedian(edges[0].at, func(yield func(time.Time, int) bool) {
			for i, e := range edges {
				if !yield(e.at, inflight[i]) {
					return
				}
			}
		})
	}
	st := Steady{Level: level, Total: f.spanN}
	for i, e := range edges {
		if inflight[i] >= level {
			if st.Start.IsZero() {
				st.Start = e.at
			}
			st.End = edges[min(i+1, len(edges)-1)].at
		}
	}
	for _, s := range f.spans {
		if !s.start.Before(st.Start) && !s.start.After(st.End) {
			st.Inside++
		}
	}
	return st, true
}

// weightedMedian returns the level that the steps (time, level from then on) stood at or above
// for half their time, at least 1.
func weightedMedian(from time.Time, steps func(yield func(time.Time, int) bool)) int {
	dur := map[int]time.Duration{}
	prev, lvl := from, 0
	var total time.Duration
	steps(func(at time.Time, n int) bool {
		if lvl > 0 {
			dur[lvl] += at.Sub(prev)
			total += at.Sub(prev)
		}
		prev, lvl = at, n
		return true
	})
	levels := make([]int, 0, len(dur))
	for l := range dur {
		levels = append(levels, l)
	}
	slices.Sort(levels)
	var above time.Duration
	for i := len(levels) - 1; i >= 0; i-- {
		above += dur[levels[i]]
		if float64(above) >= float64(total)/2 {
			return max(levels[i], 1)
		}
	}
	return 1
}
