// Package result is inferbench's data model for what a run measured: the Run, its Scenarios and
// their Metrics, with the metric catalogue (name, unit, better direction), and the files a run
// leaves on disk: run.json (schema inferbench/run/v1), summary.csv and run.log, written atomically
// into a timestamped folder.
package result
