package suite

import (
	"maps"
	"slices"
)

// ParamKeys returns the parameter names the benchmark declares: its params, its matrix axes, the
// keys of its include points and the parameters it accepts, sorted. A --set key no selected benchmark declares is a typo
// or a renamed parameter.
func (b *Benchmark) ParamKeys() []string {
	keys := map[string]bool{}
	for k := range b.Params {
		keys[k] = true
	}
	for _, a := range b.Axes {
		keys[a.Name] = true
	}
	for _, k := range b.Accepts {
		keys[k] = true
	}
	for _, inc := range b.Include {
		for k := range inc {
			keys[k] = true
		}
	}
	return slices.Sorted(maps.Keys(keys))
}
