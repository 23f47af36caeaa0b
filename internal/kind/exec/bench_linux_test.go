//go:build linux

package exec

import (
	"context"
	"os/exec"
	"testing"

	"github.com/inferbench/inferbench/subject"
)

// BenchmarkTrue measures one iteration of `true`, traced to its exit for its peak RSS (the
// default) and untraced (as where ptrace is refused): the difference is the cost of the peak.
func BenchmarkTrue(b *testing.B) {
	path, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true")
	}
	s, err := Open(context.Background(), subject.Spec{Config: &Config{Command: []any{path}}})
	if err != nil {
		b.Fatal(err)
	}
	for _, traced := range []bool{true, false} {
		name := "traced"
		if !traced {
			name = "untraced"
		}
		b.Run(name, func(b *testing.B) {
			traceRefused.Store(!traced)
			defer traceRefused.Store(false)
			for b.Loop() {
				if _, err := s.Do(context.Background(), subject.Request{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
