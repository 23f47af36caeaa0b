package engine

import (
	"os"
	"runtime/debug"
)

// ClientGCPercent is the garbage collector's target (as GOGC) while a scenario drives a subject
// that runs outside this process: a server, a worker, a command. The client's live heap is small
// (a few MB) while a serving load allocates for every event it reads, so at Go's default of 100
// it collects many times a second, and each collection scans the stacks of the two goroutines
// that every connection has. At 512 streams on one core that took a quarter of the requests the
// client could send (docs/performance.md, "The client's garbage collector").
const ClientGCPercent = 400

// clientGC raises the collector's target for the drive of a subject outside this process and
// returns what restores it. A Go function's benchmark (subject.Kind.InProcess) shares this
// collector with the code it measures, so its target stays the one `go test -bench` would use;
// a GOGC the user set is theirs to keep.
func clientGC(inProcess bool) (restore func()) {
	if inProcess || os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(ClientGCPercent)
	return func() { debug.SetGCPercent(old) }
}
