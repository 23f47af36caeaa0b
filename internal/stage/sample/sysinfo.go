package sample

import (
	"context"
	"math"

	"github.com/inferbench/inferbench/internal/base/sysinfo"
	"github.com/inferbench/inferbench/internal/monitor/gpu"
)

// Sysinfo returns the environment fingerprint recorded with every run (and printed by
// `inferbench sysinfo`): sysinfo's for the working directory dir and the Python interpreter
// python, with the GPUs listed through NVML when this build and machine have it, and version as
// inferbench's version.
func Sysinfo(ctx context.Context, dir, python, version string) sysinfo.Info {
	info := sysinfo.Collect(ctx, sysinfo.Options{Dir: dir, Python: python, GPUs: listGPUs})
	info.Inferbench = version
	return info
}

// listGPUs describes the GPUs for sysinfo through NVML when this build and machine have it, and
// through nvidia-smi otherwise.
func listGPUs(ctx context.Context) []sysinfo.GPU {
	infos, err := gpu.List(ctx, gpu.Config{NoSMI: true})
	if err != nil {
		return sysinfo.NvidiaSMI(ctx)
	}
	out := make([]sysinfo.GPU, 0, len(infos))
	for _, i := range infos {
		out = append(out, sysinfo.GPU{Index: i.Index, Name: i.Name, MemoryMB: int(math.Round(i.MemoryMB)),
			Driver: i.Driver, CUDA: i.CUDA, PowerLimitW: i.PowerLimitW, MIG: i.MIG, ECC: i.ECC,
			ComputeCap: i.ComputeCap, UUID: i.UUID})
	}
	return out
}
