// Package stats computes the figures inferbench reports: the distribution summary of a metric
// (percentiles, confidence interval of the median, outliers), computed once and in one place, and
// Dist, a bounded accumulator that keeps raw samples and falls back to a mergeable HDR histogram
// when a scenario produces more samples than it is allowed to hold.
//
// Percentiles use linear interpolation between closest ranks (Hyndman-Fan type 7, numpy's
// default). The confidence interval of the median is distribution-free: it is the pair of order
// statistics whose binomial coverage is at least 95%, as benchmath computes it.
package stats
