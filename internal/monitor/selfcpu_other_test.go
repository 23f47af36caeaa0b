//go:build !unix

package monitor

// selfCPU is not measured where getrusage is absent; the benchmark that uses it reports 0.
func selfCPU() float64 { return 0 }
