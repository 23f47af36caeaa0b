package sysinfo

import "golang.org/x/sys/unix"

// hostCPUMemory reads the CPU model and the memory in MB from sysctl, where macOS keeps them
// (there is no /proc).
func hostCPUMemory() (model string, memoryMB int) {
	model, _ = unix.Sysctl("machdep.cpu.brand_string")
	if b, err := unix.SysctlUint64("hw.memsize"); err == nil {
		memoryMB = int(b / (1 << 20))
	}
	return model, memoryMB
}
