//go:build !darwin && !windows

package sysinfo

// hostCPUMemory has nothing to add where /proc has the CPU model and memory (Linux) or where no
// source is known.
func hostCPUMemory() (model string, memoryMB int) { return "", 0 }
