package callgrind

import (
	"errors"
	"runtime"
)

// Client request codes (valgrind.h, callgrind.h): VG_USERREQ_TOOL_BASE('C','T') + n.
const (
	reqRunningOnValgrind = 0x1001
	reqDumpStats         = 0x43540000
	reqZeroStats         = 0x43540001
	reqToggleCollect     = 0x43540002
)

// ErrNoClientRequests is the error of a process that would count its own iterations on an
// architecture whose client requests this package does not issue.
var ErrNoClientRequests = errors.New("instruction mode counts Go functions on amd64 only (callgrind's client requests are issued in amd64 assembly): this binary is " + runtime.GOOS + "/" + runtime.GOARCH + "; count a command instead (an exec definition running the binary), or measure time")

func request(code uintptr, arg1 uintptr) uintptr {
	args := [6]uintptr{code, arg1}
	return clientRequest(&args)
}

// Running reports whether the process runs under valgrind (false where client requests are not
// supported).
func Running() bool { return supported && request(reqRunningOnValgrind, 0) > 0 }

// ToggleCollect turns callgrind's collection of events on or off (CALLGRIND_TOGGLE_COLLECT).
func ToggleCollect() { request(reqToggleCollect, 0) }

// ZeroStats zeroes the events counted so far (CALLGRIND_ZERO_STATS).
func ZeroStats() { request(reqZeroStats, 0) }

// DumpStats writes the events counted since the last dump or zero to a new callgrind file (the
// output file's name with ".N" added) and zeroes them (CALLGRIND_DUMP_STATS).
func DumpStats() { request(reqDumpStats, 0) }

// Supported returns ErrNoClientRequests where this package cannot issue client requests.
func Supported() error {
	if !supported {
		return ErrNoClientRequests
	}
	return nil
}
