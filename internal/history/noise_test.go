package history

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/inferbench/inferbench/compare"
	"github.com/inferbench/inferbench/internal/testkit/storetest"
	"github.com/inferbench/inferbench/report"
	"github.com/inferbench/inferbench/store"
	_ "github.com/inferbench/inferbench/store/sqlite"
)

// With 12 stored runs of a scenario, its latency threshold comes from their noise and the verdict
// row says so; the run under test is not part of its own history.
func TestNoiseHistoryThreshold(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Params{URL: filepath.Join(t.TempDir(), "history.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range 13 {
		center := 10.0
		if i == 12 {
			center = 30 // the run under test: +200%, which must not widen its own threshold
		}
		r := storetest.MakeRun(fmt.Sprintf("run%02d", i+1), storetest.T0.Add(time.Duration(i)*time.Hour), uint64(i+1), center, []string{"resnet"}, 1, 40)
		if err := st.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	old, err := st.Get(ctx, "run12")
	if err != nil {
		t.Fatal(err)
	}
	nw, err := st.Get(ctx, "run13")
	if err != nil {
		t.Fatal(err)
	}
	xs := NoiseHistory(ctx, st, nw)(&nw.Scenarios[0], "latency_ms")
	if len(xs) != 12 {
		t.Fatalf("history of latency_ms: %d points, want the 12 runs before run13", len(xs))
	}
	rep := compare.Runs(old, nw, compare.Config{History: NoiseHistory(ctx, st, nw)})
	var lat *compare.Row
	for i := range rep.Rows {
		if rep.Rows[i].Metric == "latency_ms" {
			lat = &rep.Rows[i]
		}
	}
	if lat == nil || lat.ThresholdRuns != 12 || lat.Threshold >= (compare.Thresholds{}).For(lat.Benchmark, "latency_ms") || !lat.Failed() {
		t.Fatalf("latency_ms row %+v: want a threshold below the default from 12 runs, and a regression", lat)
	}
	var b bytes.Buffer
	if err := report.CompareText(&b, rep); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`REGRESSION \(limit \+[0-9.]+%: threshold [0-9.]+% from 12 runs\)`).Match(b.Bytes()) {
		t.Errorf("the verdict row does not say where its threshold came from:\n%s", b.String())
	}
}
