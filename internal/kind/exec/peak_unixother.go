//go:build unix && !linux

package exec

import "os"

// ownPeak is the command's peak RSS from its rusage, when that figure is surely its own
// (childMaxRSS), else 0.
func ownPeak(ps *os.ProcessState) float64 { return childMaxRSS(ps) }
