package workload

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/pretrained"
)

// Note: github.com/sugarme/tokenizer is pure Go and loads Hugging Face's tokenizer.json (BPE,
// WordPiece, Unigram, with their normalizers and pre-tokenizers); github.com/daulet/tokenizers
// binds the Rust library through cgo and would make the build need a Rust toolchain.

// counter counts tokens with a tokenizer.json (Config.Tokenizer) and knows what each vocabulary
// word costs, alone at the start of a text and after a space, so that synthetic text of an exact
// token count is built without tokenizing it.
type counter struct {
	tk    *tokenizer.Tokenizer
	path  string
	cost  [][2]int // cost[w]: tokens of Vocabulary[w] at the start of a text, and after a space
	fill  int      // a word of one token in both places, or -1
	exact bool     // a text's tokens are the sum of its words' (checked on the corpus)
}

// openCounter loads path.
func openCounter(path string) (*counter, error) {
	tk, err := pretrained.FromFile(path)
	if err != nil {
		return nil, fmt.Errorf("workload tokenizer %s: %w", path, err)
	}
	c := &counter{tk: tk, path: path, cost: make([][2]int, len(Vocabulary)), fill: -1}
	for w, word := range Vocabulary {
		a, err := c.count(word)
		if err != nil {
			return nil, err
		}
		b, err := c.count("a " + word)
		if err != nil {
			return nil, err
		}
		one, _ := c.count("a")
		c.cost[w] = [2]int{a, b - one}
		if a == 1 && b-one == 1 && c.fill < 0 {
			c.fill = w
		}
	}
	return c, nil
}

// count returns the tokens of s, without the special tokens a template adds.
func (c *counter) count(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	en, err := c.tk.EncodeSingle(s, false)
	if err != nil {
		return 0, fmt.Errorf("workload tokenizer %s: %w", c.path, err)
	}
	return len(en.Ids), nil
}

// check finds whether the corpus's text costs the sum of its words, so that spans are exact.
func (c *counter) check(s *Source) error {
	const words = 400
	text := s.corpus[:s.starts[words]-1]
	n, err := c.count(text)
	if err != nil {
		return err
	}
	sum := 0
	for i := range words {
		sum += c.cost[s.ids[i]][min(i, 1)]
	}
	c.exact = n == sum && c.fill >= 0
	return nil
}

// tokenSpan returns corpus text of exactly n tokens from a random word; lead says it follows a
// space (its first word costs what it does after one). When the next word does not fit, words of
// one token fill what is left.
func (s *Source) tokenSpan(r *rand.Rand, n int, lead bool) string {
	c := s.tok
	at := r.IntN(corpusWords)
	var b strings.Builder
	b.Grow(6 * n)
	put := func(w int) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Vocabulary[w])
	}
	spaced := func() int {
		if lead || b.Len() > 0 {
			return 1
		}
		return 0
	}
	for left := n; left > 0; {
		w := int(s.ids[at%corpusWords])
		at++
		if k := c.cost[w][spaced()]; k <= left {
			put(w)
			left -= k
			continue
		}
		for ; left > 0; left-- {
			put(c.fill)
		}
	}
	return b.String()
}

// span returns text of n tokens (with a tokenizer that makes exact spans) or n words.
func (s *Source) span(r *rand.Rand, n int, lead bool) string {
	if s.tok != nil && s.tok.exact {
		return s.tokenSpan(r, n, lead)
	}
	return s.window(r, n)
}

// Counted says how a Source counts input tokens: "tokenizer.json (path)" or "words".
func (s *Source) Counted() string {
	if s.tok != nil {
		return "tokenizer " + s.tok.path
	}
	return "words"
}
