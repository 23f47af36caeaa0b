//go:build !unix

package exec

import "os"

// ownPeak is 0: no peak RSS is measured here.
func ownPeak(*os.ProcessState) float64 { return 0 }
