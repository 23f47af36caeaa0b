package figures

import (
	"time"

	"github.com/inferbench/inferbench/result"
	"github.com/inferbench/inferbench/stats"
)

// sliceMetrics are the per-request metrics summarised per slice: one sample a request each.
//
// Note: itl_ms (one sample a token) was summarised per slice too; at 7,000 streamed requests/s
// of 32 tokens that doubled the client's per-token work for a figure tpot_ms already follows.
var sliceMetrics = []string{"ttft_ms", "tpot_ms", "e2e_ms"}

// slice is the requests of one time slice.
type slice struct {
	requests, failed int
	dists            map[string]*stats.Dist
}

// sliceOf counts a measured request in the slice of its send time and returns the slice, or nil
// when slices are off.
func (f *Figures) sliceOf(start time.Time, failed bool) *slice {
	if f.sliceLen <= 0 || f.began.IsZero() || start.IsZero() {
		return nil
	}
	k := int(start.Sub(f.began) / f.sliceLen)
	if k < 0 || k > maxSlices {
		return nil
	}
	for len(f.slices) <= k {
		f.slices = append(f.slices, &slice{dists: map[string]*stats.Dist{}})
	}
	sl := f.slices[k]
	sl.requests++
	if failed {
		sl.failed++
	}
	return sl
}

// add adds a sample of metric m, when m is one of sliceMetrics.
func (sl *slice) add(m string, v float64) {
	d, ok := sl.dists[m]
	if !ok {
		switch m {
		case "ttft_ms", "tpot_ms", "e2e_ms":
		default:
			return
		}
		d = stats.NewDist(sliceSamples)
		sl.dists[m] = d
	}
	d.Add(v)
}

// sliceSamples bounds the raw samples of a slice's distributions (beyond, a histogram).
const sliceSamples = 1 << 10

// maxSlices bounds the slices of one scenario.
const maxSlices = 10000

// Slices returns the figures of the measured phase's time slices (run.json's extra.slices).
func (f *Figures) Slices() []result.SliceStat {
	out := make([]result.SliceStat, 0, len(f.slices))
	secs := f.sliceLen.Seconds()
	for k, sl := range f.slices {
		st := result.SliceStat{StartS: float64(k) * secs, EndS: float64(k+1) * secs, Requests: sl.requests, Failed: sl.failed,
			RPS: float64(sl.requests-sl.failed) / secs, Quantiles: map[string]float64{}}
		for _, m := range sliceMetrics {
			if d, ok := sl.dists[m]; ok {
				if x, err := d.Summary(); err == nil {
					st.Quantiles[m+".p50"], st.Quantiles[m+".p90"], st.Quantiles[m+".p99"] = x.Median, x.P90, x.P99
				}
			}
		}
		out = append(out, st)
	}
	return out
}

// DefaultSlice is the time slice of serving loads when load.Config's Slice is zero.
const DefaultSlice = 10 * time.Second
