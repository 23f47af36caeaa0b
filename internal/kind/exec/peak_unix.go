//go:build unix

package exec

import (
	"os"
	"runtime"
	"syscall"
)

// childMaxRSS returns the max RSS (bytes) of a reaped command from its rusage, when that figure
// must be the command's own: larger than inferbench's own peak. Where a command starts as a copy
// of inferbench's memory (vfork on Linux, fork elsewhere), a smaller figure may be inferbench's;
// it is not reported (0).
func childMaxRSS(ps *os.ProcessState) float64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	var self syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil {
		return 0
	}
	if ru.Maxrss <= self.Maxrss {
		return 0
	}
	unit := 1024.0 // kilobytes, except on Apple's systems
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		unit = 1
	}
	return float64(ru.Maxrss) * unit
}
