package mockserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/inferbench/inferbench/internal/kind/openai"
	"github.com/inferbench/inferbench/internal/workload"
	"github.com/inferbench/inferbench/subject"
)

// TestStatsConnections: the server counts the connections it accepts and those closed under it,
// and /debug/stats says so: the inferbench client at concurrency 4 opens 4 and closes none.
func TestStatsConnections(t *testing.T) {
	ms := New(Config{OutputTokens: workload.Fixed(4)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, err := ms.Start(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := openai.Open(ctx, openai.Config{URL: base, Model: "mock"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 100 {
				if _, err := s.Do(ctx, subject.Request{Index: w*100 + i}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if st := ms.Stats(); st.Connections != 4 || st.Closed != 0 {
		t.Errorf("4 streams at a time: %d connections accepted, %d closed; want 4 and 0", st.Connections, st.Closed)
	}
	s.Close()
	resp, err := http.Get(strings.TrimSuffix(base, "/v1") + "/debug/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || st.Completed != 400 || st.Connections != 5 {
		t.Errorf("/debug/stats: %+v, %v; want 400 completed, 5 connections (with the one asking)", st, err)
	}
}
