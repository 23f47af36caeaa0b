// Package drive holds the built-in load modes' drivers, which call a subject on a schedule as a
// load.Config says: single (warm-up then measured iterations, one at a time), and for serving
// loads concurrency (a closed loop), rate (an open loop on a seeded arrival schedule, with its
// ramp), sweep, offline, capacity (the SLO search), sessions (multi-turn conversations) and
// trace (a timestamped replay). Each registers itself with load.RegisterDriver; a driver reports
// every call to the load.Sink it is given and never computes statistics itself, apart from the
// figures of the load as a whole (goodput, the client's own delays, a sweep's steps) that it
// reports through load.Reporter.
package drive
