package workload

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/inferbench/inferbench/result"
)

// FuzzParseDist checks the distribution parser on arbitrary text: no panic; what it accepts
// validates, prints as text that parses back to the same distribution, and samples finite,
// non-negative values.
func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"128", "uniform(64,256)", "normal(mean=128,std=32)", "lognormal(mean=128,std=64,max=512)",
		"fixed(3)", "uniform(min=1,max=1)", "normal(1)", "NaN", "1e308", "lognormal(mean=1e308,std=1e308)", "uniform(5,1)", "(", "x()"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDist(s)
		if err != nil {
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("ParseDist(%q) accepted %v, which Validate refuses: %v", s, d, err)
		}
		back, err := ParseDist(d.String())
		if err != nil || back != d {
			t.Fatalf("ParseDist(%q) = %+v; its text %q parses back to %+v, %v", s, d, d.String(), back, err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		for range 16 {
			if v := d.Sample(r); math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("%v sampled %v", d, v)
			}
		}
	})
}

// FuzzReadPrompts feeds arbitrary bytes to the prompt file reader (--prompts, workload.file),
// as JSON Lines, as ShareGPT and with the format guessed: no panic, and what it accepts is at
// most limit prompts, each with the words of its text as its input length and an output length
// the server can be asked for (0 to result.MaxTokens).
func FuzzReadPrompts(f *testing.F) {
	for _, s := range []string{
		`{"prompt": "hello world", "output_tokens": 16}` + "\n" + `{"text": "x"}` + "\n\n",
		`{"prompt": "a", "max_tokens": 3}`, `{"prompt": "a", "output_tokens": -5}`, `{"prompt": "a", "output_tokens": 1000000000000}`,
		`null`, `{"prompt": null, "text": "t"}`, "\xff",
		`[{"conversations": [{"from": "human", "value": "hi there"}, {"from": "gpt", "value": "hello you"}]}, {"conversations": []}]`,
		` [ {"conversations": [{"from": "user", "value": "q"}, {"from": "user", "value": "r"}]} ] 5`, `[`, `[1]`,
	} {
		f.Add([]byte(s), uint8(0))
	}
	for _, p := range []string{"testdata/prompts.jsonl", "testdata/sharegpt.json"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, uint8(0))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		const limit = 5
		format := []string{"", "jsonl", "sharegpt"}[mode%3]
		ps, err := readPrompts("fuzz", format, bytes.NewReader(data), limit)
		if err != nil {
			return
		}
		if len(ps) > limit {
			t.Fatalf("%d prompts, over the limit of %d", len(ps), limit)
		}
		for i, p := range ps {
			if p.InputTokens != CountWords(p.Text) || p.OutputTokens < 0 || p.OutputTokens > result.MaxTokens {
				t.Fatalf("prompt %d: %d words of input (its text has %d), %d of output", i, p.InputTokens, CountWords(p.Text), p.OutputTokens)
			}
		}
	})
}
