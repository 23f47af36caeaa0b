package serveimport

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/inferbench/inferbench/internal/testkit/heaptest"
)

// writeVLLMDetailed writes a `vllm bench serve --save-detailed` file of n requests of tokens
// output tokens each, in serve.py's layout (parallel per-request arrays, generated texts
// included), and returns its path and size.
func writeVLLMDetailed(t testing.TB, n, tokens int) (string, int64) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "detailed.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintf(w, `{"date": "20261202-033813", "endpoint_type": "openai-chat", "backend": "openai-chat", "label": null, "model_id": "big", "num_prompts": %d, "request_rate": "inf", "max_concurrency": 64, "duration": %g, "completed": %d, "failed": 0, "request_throughput": 1.0`, n, float64(n)/100, n)
	array := func(key string, elem func(i int)) {
		fmt.Fprintf(w, `, %q: [`, key)
		for i := range n {
			if i > 0 {
				w.WriteString(", ")
			}
			elem(i)
		}
		w.WriteString("]")
	}
	var num []byte
	float := func(x float64) { num = strconv.AppendFloat(num[:0], x, 'g', 17, 64); w.Write(num) }
	array("input_lens", func(i int) { w.WriteString("32") })
	array("output_lens", func(i int) { w.WriteString(strconv.Itoa(tokens)) })
	array("ttfts", func(i int) { float(0.02 + float64(i%100)*1e-4) })
	array("itls", func(i int) {
		w.WriteString("[")
		for j := range tokens - 1 {
			if j > 0 {
				w.WriteString(", ")
			}
			float(0.004 + float64((i+j)%50)*1e-5)
		}
		w.WriteString("]")
	})
	array("latencies", func(i int) { float(0.02 + float64(i%100)*1e-4 + float64(tokens-1)*0.00425) })
	array("start_times", func(i int) { float(1000 + float64(i)*0.01) })
	array("generated_texts", func(i int) { w.WriteString(`"the quick brown fox jumps over the lazy dog, again and again and again"`) })
	array("errors", func(i int) { w.WriteString(`""`) })
	w.WriteString(`, "mean_ttft_ms": 25.0}`)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	f.Close()
	return p, fi.Size()
}

// A detailed vLLM export imports in memory bounded by the distributions it keeps, not by the
// file: its parallel arrays are read in step, a request at a time. With the distributions' raw
// samples bounded at 256 (65536 in use), files of 1000 and 4000 requests of 64 tokens (1.5 and
// 5.9 MB) peaked at 12.7 and 13.1 MB of heap; bounded at 512, files of 2000, 8000 and 32000
// requests (3.0, 11.9 and 47.5 MB) at 12.4, 13.9 and 13.3 MB (the distributions' histograms, a
// request, the decoders' garbage): flat in the file's size, where decoding the whole document
// (serve.py's dict) takes several times the file.
func TestImportMemoryBounded(t *testing.T) {
	defer func(n int) { maxSamples = n }(maxSamples)
	maxSamples = 256
	var peaks []uint64
	for _, n := range []int{1000, 4000} {
		path, size := writeVLLMDetailed(t, n, 64)
		var err error
		var got int
		peak := heaptest.Peak(func() {
			r, _, e := Read(path, "detailed.json", Options{})
			err = e
			if e == nil {
				got = r.Scenarios[0].Iterations.Measured
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if got != n {
			t.Fatalf("%d requests imported, want %d", got, n)
		}
		t.Logf("%d requests: file %.1f MB, heap peak %.1f MB", n, float64(size)/1e6, float64(peak)/1e6)
		peaks = append(peaks, peak)
	}
	if peaks[1] > peaks[0]*3/2+(2<<20) || peaks[1] > 32<<20 {
		t.Errorf("heap peaks %d and %d bytes for files of 1000 and 4000 requests: want the second within 1.5 times the first (+2 MB) and under 32 MB", peaks[0], peaks[1])
	}
}
