// Package web is `inferbench serve`: a dashboard over the history store (the runs, one run,
// any two runs compared, trends per metric with change points, baselines), a live view of a run
// in progress over server-sent events, a read-only JSON API, and Prometheus metrics.
//
// Pages are the report package's HTML (the same renderers as report.html) with a navigation bar;
// the chart library is served once from /assets. Every name and parameter comes from benchmark
// definitions and is untrusted: pages go through html/template and charts draw text on a canvas.
//
// This is the only package that imports the Prometheus client.
//
// Routes:
//
//	GET /                         runs, newest first, with links to each run, compare and trends
//	GET /runs/{id}                one run (report.html)
//	GET /compare?base=ID&head=ID  two runs compared (ids, "latest" or "baseline:NAME")
//	GET /trends?benchmark=&metric=latency_ms.p50
//	GET /baselines                named baselines
//	GET /live                     the run in progress, updated over /api/live/events
//	GET /api/runs, /api/runs/{id}, /api/baselines, /api/history, /api/compare, /api/live
//	GET /api/live/events          server-sent events: "state", then one per change
//	GET /metrics                  Prometheus exposition
package web
