package workload

import (
	"testing"
)

// TestTokenizer: with a tokenizer.json, synthetic prompts have the token count asked, as the
// tokenizer counts them, shared prefix and history included; words were off by far with this
// tokenizer (its 600-token vocabulary splits most words). testdata/tokenizer.json is a BPE
// trained with Hugging Face's tokenizers on the vocabulary's words.
func TestTokenizer(t *testing.T) {
	tk, err := openCounter("testdata/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []Config{
		{Tokenizer: "tokenizer.json", InputTokens: Fixed(32), Seed: 3},
		{Tokenizer: "tokenizer.json", InputTokens: Dist{Kind: "uniform", Min: 5, Max: 900}, SharedPrefix: 20},
		{Tokenizer: "tokenizer.json", InputTokens: Fixed(40), OutputTokens: Fixed(7), Turns: 3},
	} {
		s, err := Open(cfg, "testdata")
		if err != nil {
			t.Fatal(err)
		}
		if !s.tok.exact || s.Counted() != "tokenizer testdata/tokenizer.json" {
			t.Fatalf("tokenizer not exact on the corpus (%s)", s.Counted())
		}
		words, tokens := 0, 0
		for i := range 40 {
			p := s.Prompt(i)
			n, err := tk.count(p.Text)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range p.History {
				k, _ := tk.count(m.Text)
				n += k
			}
			if n != p.InputTokens {
				t.Fatalf("%+v: request %d: %d tokens, InputTokens says %d", cfg, i, n, p.InputTokens)
			}
			if cfg.InputTokens.Kind == "fixed" && cfg.Turns == 0 && n != 32 {
				t.Errorf("request %d: %d tokens, want 32", i, n)
			}
			words += CountWords(p.Text)
			tokens += n
		}
		if words == tokens {
			t.Errorf("%+v: as many words as tokens: the test tells nothing", cfg)
		}
	}
	// Trace blocks keep their token lengths.
	s, err := Open(Config{File: "mooncake.jsonl", Format: FormatMooncake, Tokenizer: "tokenizer.json"}, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{600, 520, 100} {
		if n, _ := tk.count(s.Prompt(i).Text); n != want {
			t.Errorf("trace request %d: %d tokens, want %d", i, n, want)
		}
	}
	if _, err := Open(Config{Tokenizer: "missing.json"}, "testdata"); err == nil {
		t.Error("a missing tokenizer.json opened")
	}
}
