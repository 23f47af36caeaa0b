package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/inferbench/inferbench/store"
)

// The list answers of the JSON API are paged: at most ?limit= items (default and maximum below),
// newest first for runs; when more are stored, a `Link: <...>; rel="next"` header gives the URL
// of the next (older) page, which carries ?until=. A client follows it until it is absent.
const (
	defaultRunsPage = maxListed
	maxRunsPage     = 1000
	maxHistoryPage  = maxHistory
)

// pageParams reads ?limit= (1 to max, default def) and ?until= (RFC 3339).
func pageParams(q url.Values, def, max int) (limit int, until time.Time, err error) {
	limit = def
	if s := q.Get("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > max {
			return 0, until, usageError{fmt.Errorf("limit: want a number from 1 to %d, got %q", max, s)}
		}
	}
	if s := q.Get("until"); s != "" {
		if until, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return 0, until, usageError{fmt.Errorf("until: want an RFC 3339 time such as 2024-05-01T12:00:00Z, got %q", s)}
		}
	}
	return limit, until, nil
}

// cut pages items fetched newest first, limit+1 of them at most: it returns how many to keep
// and, when more are stored, the until of the next page. Items of the boundary's time are all
// left to the next page (unless they fill this one), so none is skipped or repeated.
func cut(times []time.Time, limit int) (keep int, next time.Time, more bool) {
	if len(times) <= limit {
		return len(times), time.Time{}, false
	}
	b := times[limit-1]
	if !times[limit].Equal(b) {
		return limit, b, true
	}
	keep = limit
	for keep > 0 && times[keep-1].Equal(b) {
		keep--
	}
	if keep == 0 { // one instant fills the page: the rest of that instant cannot be paged
		return limit, b, true
	}
	return keep, b.Add(time.Microsecond), true
}

// setNext sets the Link header of the next page.
func setNext(w http.ResponseWriter, r *http.Request, until time.Time) {
	u := *r.URL
	q := u.Query()
	q.Set("until", until.UTC().Format(time.RFC3339Nano))
	u.RawQuery = q.Encode()
	w.Header().Set("Link", "<"+u.RequestURI()+`>; rel="next"`)
}

func (s *Server) apiRunsPaged(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, until, err := pageParams(q, defaultRunsPage, maxRunsPage)
	if err != nil {
		httpError(w, err)
		return
	}
	infos, err := s.store.List(r.Context(), store.Filter{Benchmark: q.Get("benchmark"), Until: until, Limit: limit + 1})
	if err == nil {
		times := make([]time.Time, len(infos))
		for i, in := range infos {
			times[i] = in.StartedAt
		}
		keep, next, more := cut(times, limit)
		infos = infos[:keep]
		if more {
			setNext(w, r, next)
		}
	}
	writeList(w, infos, err)
}

func (s *Server) apiHistoryPaged(w http.ResponseWriter, r *http.Request, hq store.Query) {
	limit, until, err := pageParams(r.URL.Query(), maxHistoryPage, maxHistoryPage)
	if err != nil {
		httpError(w, err)
		return
	}
	hq.Until, hq.Limit = until, limit+1
	points, err := s.store.History(r.Context(), hq)
	if err == nil {
		// Points come oldest first: page them newest first.
		slices.Reverse(points)
		times := make([]time.Time, len(points))
		for i, p := range points {
			times[i] = p.Time
		}
		keep, next, more := cut(times, limit)
		points = points[:keep]
		slices.Reverse(points)
		if more {
			setNext(w, r, next)
		}
	}
	writeList(w, points, err)
}
