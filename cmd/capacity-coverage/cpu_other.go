//go:build !unix

package main

// cpuSeconds is 0 where the process's CPU time is not read (no getrusage): the table's CPU
// column then reads 0.
func cpuSeconds() float64 { return 0 }
