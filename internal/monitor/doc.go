// Package monitor samples resources beside a benchmark's measured window: the process tree under
// test (RSS, CPU, threads, I/O), the system (CPU, memory, load), CPU package energy from RAPL and,
// through the leaf package monitor/gpu, NVIDIA GPUs.
//
// A Monitor runs a set of Samplers on a fixed period (100 ms by default). It is started when the
// measured window opens and stopped when it closes; Stop returns the window's result.Resources
// (run.json's extra.resources, the types declared once in package result) with an exact aggregate
// (mean, min, peak, last) of every gauge, a timeline of each gauge bounded to a fixed number of
// points however long the run, and the totals (energy, bytes, peak RSS) the samplers computed for
// the window.
//
// Pure helpers turn the figures into derived metrics: energy per item and per token, a CO2e
// estimate from a grid intensity and PUE (Grid), and memory growth across the window (Growth).
//
// Samplers never print; a resource that is absent (no RAPL, no GPU) is reported as unavailable,
// never as an error.
package monitor
