//go:build !unix

package run

import "os"

func lockRunLog(*os.File) {}

// tryLockRunLog cannot tell a running run from a killed one here: it never recovers.
func tryLockRunLog(string) (func(), bool) { return nil, false }
