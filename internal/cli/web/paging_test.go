package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// follow GETs path and the pages its Link headers name, and returns every item.
func follow[T any](t *testing.T, srv http.Handler, path string) (all []T, pages int) {
	t.Helper()
	for path != "" {
		w := get(t, srv, path)
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
		}
		var page []T
		if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		pages++
		path = ""
		if l := w.Header().Get("Link"); l != "" {
			path = strings.TrimPrefix(strings.SplitN(l, ">", 2)[0], "<")
		}
		if pages > 100 {
			t.Fatal("more than 100 pages")
		}
	}
	return all, pages
}

// TestAPIPaging checks that the list answers are paged: ?limit= bounds an answer, the Link header
// leads to the rest, and following it gives every item once, in the order of one whole answer
// (points of one run at a page boundary included).
func TestAPIPaging(t *testing.T) {
	srv, _ := newTestServer(t)
	type run struct{ ID string }
	whole, _ := follow[run](t, srv, "/api/runs?limit=1000")
	paged, pages := follow[run](t, srv, "/api/runs?limit=5")
	if len(whole) != 12 || pages != 3 {
		t.Fatalf("%d runs whole, %d pages of 5", len(whole), pages)
	}
	if d := cmp.Diff(whole, paged); d != "" {
		t.Errorf("runs paged (-whole +paged):\n%s", d)
	}
	type point struct {
		RunID, Scenario string
		Value           float64
	}
	const h = "/api/history?benchmark=resnet&metric=latency_ms.p50"
	wholeP, _ := follow[point](t, srv, h)
	pagedP, pages := follow[point](t, srv, h+"&limit=7") // 3 scenarios a run: boundaries split runs
	if len(wholeP) != 36 || pages < 6 {
		t.Fatalf("%d points whole, %d pages of 7", len(wholeP), pages)
	}
	// Pages come newest first, each oldest first within: compare as sets in order of runs.
	key := func(ps []point) map[point]int {
		m := map[point]int{}
		for _, p := range ps {
			m[p]++
		}
		return m
	}
	if d := cmp.Diff(key(wholeP), key(pagedP)); d != "" {
		t.Errorf("history paged (-whole +paged):\n%s", d)
	}
	for _, bad := range []string{"/api/runs?limit=0", "/api/runs?limit=1001", "/api/runs?limit=x", "/api/runs?until=yesterday", h + "&limit=5001"} {
		if w := get(t, srv, bad); w.Code != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", bad, w.Code)
		}
	}
}
