package workload

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
)

func TestParseDist(t *testing.T) {
	tests := []struct {
		in   string
		want Dist
		err  string
	}{
		// A bare number is a fixed value.
		{in: "128", want: Dist{Kind: "fixed", Value: 128}},
		{in: "fixed(7.5)", want: Dist{Kind: "fixed", Value: 7.5}},
		// Positional arguments follow the kind's order.
		{in: "uniform(64, 256)", want: Dist{Kind: "uniform", Min: 64, Max: 256}},
		{in: "normal(128,32)", want: Dist{Kind: "normal", Mean: 128, Std: 32}},
		// Named arguments and clamps.
		{in: "LogNormal(std=64, mean=128, max=1024)", want: Dist{Kind: "lognormal", Mean: 128, Std: 64, Max: 1024}},
		{in: "normal(128, 32, min=1, max=512)", want: Dist{Kind: "normal", Mean: 128, Std: 32, Min: 1, Max: 512}},
		// Errors name the problem.
		{in: "", err: "empty distribution"},
		{in: "gamma(1,2)", err: `unknown kind "gamma"`},
		{in: "uniform(1,2,3)", err: "too many positional"},
		{in: "normal(mean=x)", err: "not a number"},
		{in: "normal(mean=1,mean=2)", err: "given twice"},
		{in: "normal(mu=1)", err: `unknown argument "mu"`},
		{in: "uniform(10, 5)", err: "min is above max"},
		{in: "-3", err: "non-negative"},
		{in: "normal(128,32", err: "want kind(args)"},
		{in: "lognormal(0, 5)", err: "mean above 0"},
	}
	for _, tt := range tests {
		got, err := ParseDist(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseDist(%q) error = %v, want it to contain %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseDist(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseDist(%q) (-want +got):\n%s", tt.in, diff)
		}
		// The text form round-trips.
		back, err := ParseDist(got.String())
		if err != nil || back != got {
			t.Errorf("ParseDist(%q).String() = %q does not round-trip: %v %v", tt.in, got.String(), back, err)
		}
	}
}

func TestDistMoments(t *testing.T) {
	tests := []struct {
		spec      string
		mean, std float64
	}{
		{"fixed(5)", 5, 0},
		{"uniform(0, 10)", 5, 10 / math.Sqrt(12)},
		{"normal(100, 15)", 100, 15},
		{"lognormal(mean=200, std=100)", 200, 100},
	}
	for _, tt := range tests {
		d, err := ParseDist(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		const n = 200000
		var sum, sum2 float64
		for range n {
			v := d.Sample(r)
			sum += v
			sum2 += v * v
		}
		mean := sum / n
		std := math.Sqrt(sum2/n - mean*mean)
		if math.Abs(mean-tt.mean) > 0.01*tt.mean+1e-9 {
			t.Errorf("%s: mean %.3f, want %.3f", tt.spec, mean, tt.mean)
		}
		if math.Abs(std-tt.std) > 0.03*tt.std+1e-9 {
			t.Errorf("%s: std %.3f, want %.3f", tt.spec, std, tt.std)
		}
	}
}

func TestDistClamp(t *testing.T) {
	d, _ := ParseDist("normal(10, 50, min=2, max=20)")
	r := rand.New(rand.NewPCG(3, 4))
	sawMin, sawMax := false, false
	for range 10000 {
		v := d.Sample(r)
		if v < 2 || v > 20 {
			t.Fatalf("sample %v outside [2, 20]", v)
		}
		sawMin = sawMin || v == 2
		sawMax = sawMax || v == 20
	}
	if !sawMin || !sawMax {
		t.Errorf("clamps never reached: min %v max %v", sawMin, sawMax)
	}
}

func TestDistYAML(t *testing.T) {
	var c Config
	src := "input_tokens: \"lognormal(mean=550, std=150)\"\noutput_tokens: 150\nshared_prefix: 8\n"
	if err := yaml.UnmarshalWithOptions([]byte(src), &c, yaml.Strict()); err != nil {
		t.Fatal(err)
	}
	want := Config{InputTokens: Dist{Kind: "lognormal", Mean: 550, Std: 150}, OutputTokens: Fixed(150), SharedPrefix: 8}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("decoded config (-want +got):\n%s", diff)
	}
	if err := yaml.Unmarshal([]byte("input_tokens: wobble(1)\n"), &c); err == nil {
		t.Error("bad distribution decoded without error")
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	cfg := Config{Seed: 42, CacheKey: "k", InputTokens: Dist{Kind: "uniform", Min: 10, Max: 300}, OutputTokens: Dist{Kind: "normal", Mean: 64, Std: 16}}
	a, err := Open(cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Open(cfg, "")
	// Prompts are a function of the index, whatever order and goroutine asks.
	want := make([]Prompt, 200)
	for i := range want {
		want[i] = a.Prompt(i)
	}
	got := make([]Prompt, 200)
	var wg sync.WaitGroup
	for i := len(got) - 1; i >= 0; i-- {
		wg.Go(func() { got[i] = b.Prompt(i) })
	}
	wg.Wait()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("same seed, different prompts (-want +got):\n%s", diff)
	}
	distinct := map[string]bool{}
	for _, p := range want {
		if n := CountWords(p.Text); n != p.InputTokens {
			t.Fatalf("prompt has %d words, says %d tokens", n, p.InputTokens)
		}
		if p.InputTokens < 10 || p.InputTokens > 300 || p.OutputTokens < 1 {
			t.Fatalf("lengths out of range: %+v", p)
		}
		distinct[p.Text] = true
	}
	if len(distinct) < 190 {
		t.Errorf("only %d distinct prompts of 200", len(distinct))
	}
	c, _ := Open(Config{Seed: 43, CacheKey: "k", InputTokens: cfg.InputTokens}, "")
	if c.Prompt(0).Text == a.Prompt(0).Text {
		t.Error("different seeds gave the same prompt")
	}
}

func TestSyntheticDefaultsAndLong(t *testing.T) {
	s, err := Open(Config{}, "")
	if err != nil {
		t.Fatal(err)
	}
	p := s.Prompt(5)
	if p.InputTokens != DefaultInputTokens || CountWords(p.Text) != DefaultInputTokens || p.OutputTokens != 0 {
		t.Errorf("default prompt = %d tokens (%d words), output %d", p.InputTokens, CountWords(p.Text), p.OutputTokens)
	}
	long, _ := Open(Config{InputTokens: Fixed(corpusWords*2 + 5)}, "")
	if n := CountWords(long.Prompt(0).Text); n != corpusWords*2+5 {
		t.Errorf("long prompt has %d words, want %d", n, corpusWords*2+5)
	}
}

func TestSharedPrefix(t *testing.T) {
	s, err := Open(Config{Seed: 1, InputTokens: Fixed(50), SharedPrefix: 20}, "")
	if err != nil {
		t.Fatal(err)
	}
	p0, p1 := s.Prompt(0), s.Prompt(1)
	w0, w1 := strings.Fields(p0.Text), strings.Fields(p1.Text)
	if len(w0) != 50 || p0.InputTokens != 50 {
		t.Fatalf("prompt has %d words (%d tokens), want 50", len(w0), p0.InputTokens)
	}
	if diff := cmp.Diff(w0[:20], w1[:20]); diff != "" {
		t.Errorf("prefixes differ:\n%s", diff)
	}
	if strings.Join(w0[20:], " ") == strings.Join(w1[20:], " ") {
		t.Error("suffixes are the same")
	}
	// A prompt shorter than the prefix still gets one unique token.
	short, _ := Open(Config{InputTokens: Fixed(5), SharedPrefix: 20}, "")
	if got := short.Prompt(0).InputTokens; got != 21 {
		t.Errorf("short prompt has %d tokens, want 21", got)
	}
}

func TestFiles(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []Prompt
	}{
		// JSONL: "prompt" or "text", "output_tokens" or "max_tokens"; blank lines skipped.
		{"jsonl", Config{File: "prompts.jsonl", Sequential: true}, []Prompt{
			{Text: "what is the capital of france", InputTokens: 6, OutputTokens: 12},
			{Text: "tell me a story", InputTokens: 4, OutputTokens: 100},
			{Text: "one two three", InputTokens: 3},
		}},
		// ShareGPT: first human turn and the reply's length; conversations without a reply skipped.
		{"sharegpt", Config{File: "sharegpt.json", Sequential: true}, []Prompt{
			{Text: "hello there friend", InputTokens: 3, OutputTokens: 5},
			{Text: "write a poem", InputTokens: 3, OutputTokens: 3},
		}},
		// Limit keeps the first prompts; output_tokens overrides the file.
		{"limit and override", Config{File: "sharegpt.json", Format: "sharegpt", Sequential: true, Limit: 1, OutputTokens: Fixed(9)}, []Prompt{
			{Text: "hello there friend", InputTokens: 3, OutputTokens: 9},
		}},
		// The shared prefix goes before file prompts too.
		{"prefix", Config{File: "prompts.jsonl", Sequential: true, Limit: 1, SharedPrefix: 2, Seed: 7, CacheKey: "k"}, []Prompt{
			{Text: words(rand.New(rand.NewPCG(7^saltOf("k"), 0x5eed_9e3f)), 2) + "\n\nwhat is the capital of france", InputTokens: 8, OutputTokens: 12},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(tt.cfg, "testdata")
			if err != nil {
				t.Fatal(err)
			}
			var got []Prompt
			for i := range s.Len() {
				got = append(got, s.Prompt(i))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("prompts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(got[0], s.Prompt(s.Len())); diff != "" {
				t.Errorf("prompts do not cycle:\n%s", diff)
			}
		})
	}
}

func TestFileShuffle(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "{\"prompt\": \"p%d\"}\n", i)
	}
	path := filepath.Join(dir, "p.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Open(Config{File: path, Seed: 1}, "")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Open(Config{File: path, Seed: 1}, "")
	seen := map[string]bool{}
	inOrder := 0
	for i := range 100 {
		p := a.Prompt(i)
		if p.Text != again.Prompt(i).Text {
			t.Fatal("same seed, different order")
		}
		seen[p.Text] = true
		if p.Text == fmt.Sprintf("p%d", i) {
			inOrder++
		}
	}
	if len(seen) != 100 || inOrder > 10 {
		t.Errorf("shuffle: %d distinct, %d in file order", len(seen), inOrder)
	}
}

func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		cfg Config
		err string
	}{
		{Config{File: filepath.Join(dir, "missing.jsonl")}, "no such file"},
		{Config{File: write("bad.jsonl", "{\"prompt\": \"a\"}\n{oops\n")}, "bad.jsonl:2:"},
		{Config{File: write("noprompt.jsonl", "{\"question\": \"a\"}\n")}, `noprompt.jsonl:1: no "prompt"`},
		{Config{File: write("empty.jsonl", "\n\n")}, "no prompts"},
		{Config{File: write("obj.json", "{\"a\": 1}"), Format: "sharegpt"}, "JSON array"},
		{Config{File: write("x.jsonl", "{}"), Format: "csv"}, `unknown format "csv"`},
		{Config{InputTokens: Dist{Kind: "normal", Mean: -1}}, "input_tokens"},
	}
	for _, tt := range tests {
		_, err := Open(tt.cfg, "")
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Open(%+v) error = %v, want it to contain %q", tt.cfg, err, tt.err)
		}
	}
}

func TestCountWords(t *testing.T) {
	for in, want := range map[string]int{"": 0, "a": 1, " a  b\n\tc ": 3, "\r\n": 0} {
		if got := CountWords(in); got != want {
			t.Errorf("CountWords(%q) = %d, want %d", in, got, want)
		}
	}
}

func BenchmarkPrompt(b *testing.B) {
	s, _ := Open(Config{InputTokens: Dist{Kind: "lognormal", Mean: 550, Std: 150}, OutputTokens: Fixed(150)}, "")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Prompt(i)
	}
}

func ExampleSource_Prompt() {
	s, _ := Open(Config{Seed: 1, InputTokens: Fixed(6), OutputTokens: Fixed(32)}, "")
	p := s.Prompt(0)
	fmt.Println(p.InputTokens, p.OutputTokens, CountWords(p.Text))
	// Output: 6 32 6
}

func saltOf(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()
}

// TestRunsDoNotSharePrefixes: without a cache key two runs (two Opens) of one seed send prompts
// of the same lengths in other words, shared prefix included, so the second does not read the
// first's prompts from the server's prefix cache; with one key they send the same text.
func TestRunsDoNotSharePrefixes(t *testing.T) {
	cfg := Config{Seed: 5, InputTokens: Fixed(40), OutputTokens: Fixed(8), SharedPrefix: 16}
	a, _ := Open(cfg, "")
	b, _ := Open(cfg, "")
	if a.CacheKey() == b.CacheKey() || a.CacheKey() == "" {
		t.Fatalf("cache keys %q and %q: want two drawn keys", a.CacheKey(), b.CacheKey())
	}
	for i := range 20 {
		pa, pb := a.Prompt(i), b.Prompt(i)
		if pa.InputTokens != pb.InputTokens || pa.OutputTokens != pb.OutputTokens {
			t.Fatalf("prompt %d: lengths %d/%d and %d/%d differ", i, pa.InputTokens, pa.OutputTokens, pb.InputTokens, pb.OutputTokens)
		}
		wa, wb := strings.Fields(pa.Text), strings.Fields(pb.Text)
		if strings.Join(wa[:4], " ") == strings.Join(wb[:4], " ") {
			t.Errorf("prompt %d: both runs start %q", i, strings.Join(wa[:4], " "))
		}
	}
	// Within a run the shared prefix is still shared.
	if p0, p1 := strings.Fields(a.Prompt(0).Text), strings.Fields(a.Prompt(1).Text); strings.Join(p0[:16], " ") != strings.Join(p1[:16], " ") {
		t.Error("the shared prefix differs within a run")
	}
	cfg.CacheKey = a.CacheKey()
	c, _ := Open(cfg, "")
	if c.Prompt(3).Text != a.Prompt(3).Text {
		t.Error("the same cache key gave other text")
	}
}
