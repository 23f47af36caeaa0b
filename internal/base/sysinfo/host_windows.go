package sysinfo

import (
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
)

// memoryStatusEx is Windows' MEMORYSTATUSEX.
type memoryStatusEx struct {
	Length               uint32
	MemoryLoad           uint32
	TotalPhys            uint64
	AvailPhys            uint64
	TotalPageFile        uint64
	AvailPageFile        uint64
	TotalVirtual         uint64
	AvailVirtual         uint64
	AvailExtendedVirtual uint64
}

var globalMemoryStatusEx = windows.NewLazySystemDLL("kernel32.dll").NewProc("GlobalMemoryStatusEx")

// hostCPUMemory reads the CPU model from the registry (the processor's ProcessorNameString) and
// the memory in MB from GlobalMemoryStatusEx (there is no /proc).
func hostCPUMemory() (model string, memoryMB int) {
	if k, err := registry.OpenKey(registry.LOCAL_MACHINE, `HARDWARE\DESCRIPTION\System\CentralProcessor\0`, registry.QUERY_VALUE); err == nil {
		if v, _, err := k.GetStringValue("ProcessorNameString"); err == nil {
			model = strings.TrimSpace(v)
		}
		k.Close()
	}
	m := memoryStatusEx{}
	m.Length = uint32(unsafe.Sizeof(m))
	if globalMemoryStatusEx.Find() == nil {
		if r, _, _ := globalMemoryStatusEx.Call(uintptr(unsafe.Pointer(&m))); r != 0 {
			memoryMB = int(m.TotalPhys / (1 << 20))
		}
	}
	return model, memoryMB
}
