//go:build !linux || !cgo || nonvml

package gpu

import "errors"

// nvmlAvailable says whether this build can use NVML.
const nvmlAvailable = false

// openNVML is the stub for builds without cgo (or with the nonvml tag): NVML is not linked and the
// GPU monitor falls back to nvidia-smi.
func openNVML(string) (backend, error) {
	return nil, errors.New("nvml: not in this build (built without cgo or with the nonvml tag)")
}
