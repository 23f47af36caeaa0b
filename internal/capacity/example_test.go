package capacity_test

import (
	"context"
	"fmt"
	"math"

	"github.com/inferbench/inferbench/internal/capacity"
)

// A search against a server simulated in the prober: every request meets its TTFT limit of 100 ms
// below 60 requests/s, and none above. The search doubles from 10 req/s, then bisects.
func ExampleSearch() {
	obj, _ := capacity.Objectives(map[string]float64{"ttft_ms.p90": 100}, 0)
	probe := func(ctx context.Context, t *capacity.Trial) error {
		ttft := 20.0
		if t.Rate() > 60 {
			ttft = 500
		}
		for i := range t.Max() {
			m := capacity.Measures{TTFT: ttft, E2E: ttft, ITLMax: math.NaN(), TPOT: math.NaN()}
			if t.Observe(i, m) {
				break
			}
		}
		return nil
	}
	res, err := capacity.Search(context.Background(), probe, capacity.Options{Objectives: obj, Start: 10})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("capacity %.1f req/s, lower bound %.1f req/s, %d steps\n", res.CapacityRPS, res.LowerRPS, len(res.Steps))
	for _, s := range res.Steps[:4] {
		fmt.Printf("%.1f req/s: %s after %d requests\n", s.Rate, s.Verdict, s.Requests)
	}
	// Output:
	// capacity 59.4 req/s, lower bound 59.4 req/s, 10 steps
	// 10.0 req/s: pass after 200 requests
	// 20.0 req/s: pass after 200 requests
	// 40.0 req/s: pass after 200 requests
	// 80.0 req/s: fail after 200 requests
}
