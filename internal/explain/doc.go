// Package explain says why a scenario got slower: it reads the profiles two runs took of it
// (Go CPU profiles, the worker's per-function and per-operator chunks, callgrind files), compares
// every function's or operator's cost per call across the chunks of calls each run profiled, and
// names those whose change is significant after correcting for the number of entries tested
// (Benjamini-Hochberg), each with its share of the scenario's change.
//
// A profile is a list of chunks: independent groups of calls, each with the cost of every entry
// (function or operator) in it. Costs are divided by the chunk's calls of the subject, so runs of
// different lengths compare, and the spread across chunks is the noise a change must beat (a
// Welch t-test per entry). Counted costs (callgrind's instructions) have no noise: any change is
// exact.
//
// explain reads files and returns data; report draws it (text, markdown, the differential flame
// graph of report.html).
package explain
