package suite

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParseSize parses definitions of growing size, made of mappings of MaxKeys/2 keys each:
// ns per byte stays flat (linear time), where one mapping of all the keys grew with the square of
// the keys before MaxKeys (the YAML parser's parseMap).
func BenchmarkParseSize(b *testing.B) {
	for _, mappings := range []int{1, 4, 16, 64} {
		var s strings.Builder
		s.WriteString("name: big\nsubject: {kind: mock}\nparams:\n")
		for m := range mappings {
			fmt.Fprintf(&s, "  m%d:\n", m)
			for k := range maxKeys / 2 {
				fmt.Fprintf(&s, "    k%d: %d\n", k, k)
			}
		}
		data := []byte(s.String())
		b.Run(fmt.Sprintf("bytes=%d", len(data)), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Parse("big.yaml", data, noEnv); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
