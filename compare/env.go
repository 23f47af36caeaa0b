package compare

import (
	"fmt"
	"strings"

	"github.com/inferbench/inferbench/result"
)

// This file holds EnvironmentDiff: the differences between two runs' machines that a comparison
// warns about.

// environmentDiff lists the differences between two environment fingerprints that make timings
// incomparable: CPU model and count, memory, GPU models, driver and CUDA versions, OS and arch.
func environmentDiff(old, new map[string]any) []string {
	var out []string
	check := func(what string, get func(map[string]any) string) {
		a, b := get(old), get(new)
		if a != b && a != "" && b != "" {
			out = append(out, fmt.Sprintf("different %s: %s (old) vs %s (new): timings may not be comparable", what, a, b))
		}
	}
	str := func(keys ...string) func(map[string]any) string {
		return func(m map[string]any) string {
			v := result.EnvValue(m, keys...)
			if v == nil {
				return ""
			}
			return fmt.Sprint(v)
		}
	}
	gpus := func(field string) func(map[string]any) string {
		return func(m map[string]any) string {
			list, _ := m["gpus"].([]any)
			var parts []string
			for _, g := range list {
				if gm, ok := g.(map[string]any); ok {
					parts = append(parts, fmt.Sprint(gm[field]))
				}
			}
			if len(parts) == 0 && field == "name" && m != nil {
				return "none"
			}
			return strings.Join(parts, ", ")
		}
	}
	check("CPU", str("cpu", "model"))
	check("CPU count", str("cpu", "cores"))
	check("memory (MB)", str("memory_mb"))
	check("GPU", gpus("name"))
	check("GPU driver", gpus("driver"))
	check("CUDA", gpus("cuda"))
	check("OS", str("os"))
	check("architecture", str("arch"))
	return out
}
