package suite

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/parser"
)

// TestParseLinear holds that the work of parsing a definition grows linearly with its size,
// without timing anything: the bytes allocated by Parse on a file 8 times larger, of the same
// shape, are at most 16 times as many (linear growth gives about 8, growth with the square of the
// size about 64), and likewise the number of allocations. The shapes are those a quadratic step
// would show on: many mappings of MaxKeys/2 keys; one mapping of more than MaxKeys keys, which
// the YAML parser handles in time and memory growing with the square of its keys (100,000 keys:
// 87 s), refused by a linear pass before it; many benchmarks in one file; a matrix axis of many
// values (the scenario names' check expands it). The YAML parser itself on one large mapping is
// the control: the same measure finds it quadratic.
func TestParseLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("parses files of up to 1 MB")
	}
	shapes := []struct {
		name string
		make func(n int) []byte // a definition that grows with n
	}{
		{"mappings", func(n int) []byte {
			var s strings.Builder
			s.WriteString("name: big\nsubject: {kind: mock}\nparams:\n")
			for m := range n {
				fmt.Fprintf(&s, "  m%d:\n", m)
				for k := range maxKeys / 2 {
					fmt.Fprintf(&s, "    k%d: %d\n", k, k)
				}
			}
			return []byte(s.String())
		}},
		{"one-mapping", func(n int) []byte {
			return oneMapping("name: big\nsubject: {kind: mock}\nparams:\n  m:\n", 2*maxKeys*n)
		}},
		{"documents", func(n int) []byte {
			var s strings.Builder
			for d := range 40 * n {
				fmt.Fprintf(&s, "---\nname: b%d\nsubject: {kind: mock}\nparams: {model: \"${MODEL:-m}\"}\nmatrix: {x: [1, 2], y: [a, \"b/c\"]}\nbudgets: {latency_ms.p95: \"<= 25\"}\n", d)
			}
			return []byte(s.String())
		}},
		{"axis", func(n int) []byte {
			var s strings.Builder
			s.WriteString("name: big\nsubject: {kind: mock}\nmatrix:\n  x:\n")
			for v := range MaxScenarios / 16 * n {
				fmt.Fprintf(&s, "    - \"v%d/y=%d\"\n", v, v)
			}
			return []byte(s.String())
		}},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			small, large := sh.make(1), sh.make(8)
			parse := func(data []byte) func() {
				return func() { Parse("big.yaml", data, noEnv) }
			}
			checkLinear(t, small, large, parse(small), parse(large))
		})
	}
	// The control: the YAML parser alone, on one mapping of 500 and 4,000 keys.
	small, large := oneMapping("m:\n", maxKeys/2), oneMapping("m:\n", 4*maxKeys)
	bs, bl := allocated(func() { parseYAMLUnbounded(small) }), allocated(func() { parseYAMLUnbounded(large) })
	t.Logf("control: %.1f times the bytes allocated per input byte", ratio(bs, bl, small, large))
	if r := ratio(bs, bl, small, large); r <= 2 {
		t.Errorf("control: the YAML parser on one mapping of 8 times the keys allocated %.1f times as much per byte; the measure should find it quadratic (> 2)", r)
	}
}

// oneMapping is head followed by a mapping of n keys, indented by four spaces.
func oneMapping(head string, n int) []byte {
	var s strings.Builder
	s.WriteString(head)
	for k := range n {
		fmt.Fprintf(&s, "    k%d: %d\n", k, k)
	}
	return []byte(s.String())
}

// checkLinear fails when parsing large takes more than twice the bytes allocated, or twice the
// allocations, per input byte as parsing small does.
func checkLinear(t *testing.T, small, large []byte, parseSmall, parseLarge func()) {
	t.Helper()
	bs, bl := allocated(parseSmall), allocated(parseLarge)
	as, al := testing.AllocsPerRun(1, parseSmall), testing.AllocsPerRun(1, parseLarge)
	t.Logf("%d and %d bytes: %.2f times the bytes allocated and %.2f times the allocations per input byte",
		len(small), len(large), ratio(bs, bl, small, large), al/as/(float64(len(large))/float64(len(small))))
	if r := ratio(bs, bl, small, large); r > 2 {
		t.Errorf("%d bytes: %d bytes allocated; %d bytes: %d allocated: %.1f times as much per input byte (linear: about 1; bound 2)", len(small), bs, len(large), bl, r)
	}
	if r := al / as / (float64(len(large)) / float64(len(small))); r > 2 {
		t.Errorf("%d bytes: %.0f allocations; %d bytes: %.0f: %.1f times as many per input byte (linear: about 1; bound 2)", len(small), as, len(large), al, r)
	}
}

// ratio is the bytes allocated per input byte for large over those for small.
func ratio(allocSmall, allocLarge uint64, small, large []byte) float64 {
	return (float64(allocLarge) / float64(len(large))) / (float64(allocSmall) / float64(len(small)))
}

// allocated returns the fewest bytes f allocated in two calls (anything else allocating at the
// same time only adds).
func allocated(f func()) uint64 {
	best := ^uint64(0)
	for range 2 {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		best = min(best, b.TotalAlloc-a.TotalAlloc)
	}
	return best
}

// parseYAMLUnbounded is the YAML parser without the bounds checkTokens puts in front of it.
func parseYAMLUnbounded(data []byte) { parser.ParseBytes(data, 0) }
