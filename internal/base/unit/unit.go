// Package unit converts measured durations into the unit inferbench's metrics carry: every
// latency, wait and time of a metric is in milliseconds (docs/metrics.md), as a float, so that a
// figure below a millisecond keeps its digits.
package unit

import "time"

// MS returns d in milliseconds.
func MS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
