package redact

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkWriter redacts 8 MiB of process output into a file, as a scenario's output log
// (engine.MaxOutputLog) is written when the scenario ends, for four kinds of output: `yes`
// (two-byte lines), a training-style log (lines with "key: value" and "k=v" in them, the signs
// a secret's shape needs), a serving log whose every line holds "tokens=" (a key word and a
// sign: each line goes through the key=value expression), and long lines of plain text.
//
//	go test -run '^$' -bench Writer -count 3 ./redact
func BenchmarkWriter(b *testing.B) {
	const size = 8 << 20
	inputs := []struct {
		name string
		line func(i int) string
	}{
		{"yes", func(int) string { return "y\n" }},
		{"log", func(i int) string {
			return fmt.Sprintf("2026-11-25 00:33:04 INFO step %d: loss=%.4f lr=3e-4 throughput: %d samples/s\n", i, 1/float64(i+1), 1000+i%17)
		}},
		{"tokens", func(i int) string {
			return fmt.Sprintf("request %d done: prompt_tokens=%d completion_tokens=%d ttft_ms=%.2f\n", i, 12+i%7, 128, 31.5+float64(i%13))
		}},
		{"plain", func(i int) string {
			return "the quick brown fox jumps over the lazy dog while the model warms up its caches and kernels\n"
		}},
	}
	red := New("s3cr3t-token-value")
	for _, in := range inputs {
		var buf bytes.Buffer
		for i := 0; buf.Len() < size; i++ {
			buf.WriteString(in.line(i))
		}
		data := buf.Bytes()
		b.Run(in.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "out.log")
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				f, err := os.Create(path)
				if err != nil {
					b.Fatal(err)
				}
				w := NewWriter(f, red)
				if _, err := w.Write(data); err != nil {
					b.Fatal(err)
				}
				if err := w.Flush(); err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
	}
}
