// Package workload generates the prompts of a serving benchmark: synthetic prompts whose input and
// output token lengths follow seeded distributions, or prompts read from a JSONL or ShareGPT file,
// optionally behind a prefix shared by every prompt. A Source is deterministic: prompt i depends
// only on the configuration, the seed and i, so the same run sends the same requests whatever the
// concurrency and whichever goroutine asks.
//
// Token counts are estimates in words: synthetic prompts are made of common English words that most
// BPE tokenizers encode as one token each (with their leading space), and file prompts are counted
// by whitespace-separated words. The server's usage report is what results use when it has one.
package workload

import (
	"bufio"
	"bytes"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"

	"github.com/inferbench/inferbench/internal/base/readall"
	"github.com/inferbench/inferbench/result"
)

// Config describes a workload. The zero Config yields a fixed short synthetic prompt and leaves the
// output length to the server.
type Config struct {
	// Seed makes the workload deterministic; the same seed gives the same prompts.
	Seed uint64 `yaml:"seed" json:"seed,omitempty"`
	// InputTokens is the length of synthetic prompts, shared prefix included (default 32).
	// Ignored for file prompts.
	InputTokens Dist `yaml:"input_tokens" json:"input_tokens,omitzero"`
	// OutputTokens is the max_tokens asked of the server. For file prompts it overrides the length
	// given in the file. Zero leaves the length to the server.
	OutputTokens Dist `yaml:"output_tokens" json:"output_tokens,omitzero"`
	// SharedPrefix is the number of tokens at the start of every prompt that are the same for all
	// prompts (a system prompt, to exercise prefix caching).
	SharedPrefix int `yaml:"shared_prefix" json:"shared_prefix,omitempty"`
	// File holds prompts: JSON Lines ({"prompt": "...", "output_tokens": 128} per line) or
	// ShareGPT (a JSON array of {"conversations": [{"from": "human", "value": "..."}, ...]}).
	// A relative path resolves against the definition's directory.
	File string `yaml:"file" json:"file,omitempty"`
	// Format is "jsonl" or "sharegpt"; empty guesses from the extension and the first byte.
	// A timestamped trace is "trace", "mooncake" or "azure" (trace.go): its requests keep their
	// lengths and order, and load mode trace sends them at their times.
	Format string `yaml:"format" json:"format,omitempty"`
	// Sequential sends file prompts in file order instead of a seeded shuffle.
	Sequential bool `yaml:"sequential" json:"sequential,omitempty"`
	// Limit keeps at most this many prompts from the file (0: all).
	Limit int `yaml:"limit" json:"limit,omitempty"`
	// Turns makes multi-turn sessions of this many requests (default 1: single requests):
	// request i is turn i mod Turns of session i / Turns, and sends the session's earlier turns,
	// each prompt and a reply of its output length, as history before its own prompt, so the
	// conversation grows turn by turn. Load mode sessions sends a session's turns in order.
	Turns int `yaml:"turns" json:"turns,omitempty"`
	// Images adds images to every chat request (image.go).
	Images ImageConfig `yaml:"images" json:"images,omitzero"`
	// CacheKey fixes the synthetic text across runs. Without one, each Open draws a fresh key,
	// so the words of a run's synthetic prompts (and of its shared prefix, and of a trace's
	// blocks) are its own: a run repeated against the same server does not find the previous
	// run's prompts in the server's prefix cache, and read them faster than a new user's. Within
	// a run prompts share what they are set to share. Give a key (any text) when the cache is
	// what is measured: runs with the same key and seed send the same text. Lengths depend on
	// the seed alone; file prompts are sent as written.
	CacheKey string `yaml:"cache_key" json:"cache_key,omitempty"`
	// Tokenizer is a Hugging Face tokenizer.json (relative to the definition's directory) that
	// counts input tokens instead of words: synthetic text is built to the exact token count
	// asked, and file prompts are counted with it (tokenizer.go).
	Tokenizer string `yaml:"tokenizer" json:"tokenizer,omitempty"`
}

// Prompt is one request's input.
type Prompt struct {
	Text         string
	InputTokens  int // estimated prompt length in tokens (words), history included
	OutputTokens int // max_tokens to ask for; 0 leaves it to the server
	// History holds the earlier turns of the conversation, oldest first, sent before Text (a
	// multi-turn session; empty for a single request).
	History []Message
	// Images are data URLs of images sent with Text (Config.Images); their tokens are the
	// server's to count and are not in InputTokens.
	Images []string
}

// Message is one turn of a conversation's history.
type Message struct {
	Role string // "user" or "assistant"
	Text string
}

// Source yields prompts by request index. It is safe for concurrent use.
type Source struct {
	cfg     Config
	entries []Prompt // file prompts, in sending order
	trace   []traceEntry
	images  []string // data URLs, taken in turn
	tok     *counter // the tokenizer, or nil: words
	ids     []uint16 // the corpus's words, as indexes into Vocabulary
	earlier [][]int  // by trace entry: the earlier entries of its session, in order
	prefix  string   // shared prefix text, without a trailing space
	corpus  string   // synthetic words separated by single spaces
	starts  []int32  // byte offset of each corpus word; one extra entry for the end
	salt    uint64   // from the cache key: mixed into the seed of every synthetic text
	key     string   // the cache key in use (Config.CacheKey, or the one drawn)
}

// corpusWords is the number of words in the synthetic corpus; prompts are windows into it, so
// building one costs no allocation. Longer prompts repeat it.
const corpusWords = 1 << 16

// DefaultInputTokens is the synthetic prompt length when Config.InputTokens is zero.
const DefaultInputTokens = 32

// Open checks cfg, reads its file (relative to dir) when it has one, and returns the Source.
func Open(cfg Config, dir string) (*Source, error) {
	for name, d := range map[string]Dist{"input_tokens": cfg.InputTokens, "output_tokens": cfg.OutputTokens} {
		if err := d.Validate(); err != nil {
			return nil, fmt.Errorf("workload %s: %w", name, err)
		}
	}
	if cfg.SharedPrefix < 0 || cfg.Limit < 0 || cfg.Turns < 0 {
		return nil, fmt.Errorf("workload: shared_prefix, limit and turns must not be negative")
	}
	s := &Source{cfg: cfg}
	var err error
	if s.images, err = cfg.Images.images(cfg.Seed); err != nil {
		return nil, err
	}
	s.key = cfg.CacheKey
	if s.key == "" {
		var b [8]byte
		crand.Read(b[:]) //nolint:errcheck // crypto/rand.Read does not fail
		s.key = fmt.Sprintf("run-%x", b)
	}
	h := fnv.New64a()
	h.Write([]byte(s.key))
	s.salt = h.Sum64()
	s.buildCorpus()
	if cfg.Tokenizer != "" {
		path := cfg.Tokenizer
		if !filepath.IsAbs(path) && dir != "" {
			path = filepath.Join(dir, path)
		}
		if s.tok, err = openCounter(path); err != nil {
			return nil, err
		}
		if err := s.tok.check(s); err != nil {
			return nil, err
		}
	}
	if cfg.SharedPrefix > 0 {
		s.prefix = words(rand.New(rand.NewPCG(cfg.Seed^s.salt, 0x5eed_9e3f)), cfg.SharedPrefix)
		if s.tok != nil && s.tok.exact {
			s.prefix = s.tokenSpan(rand.New(rand.NewPCG(cfg.Seed^s.salt, 0x5eed_9e3f)), cfg.SharedPrefix, false)
		}
	}
	if cfg.File == "" {
		return s, nil
	}
	path := cfg.File
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	if isTrace(cfg.Format) {
		f, err := readall.Open(path)
		if err != nil {
			return nil, fmt.Errorf("workload: %w", err)
		}
		defer f.Close()
		if s.trace, err = readTrace(path, cfg.Format, bufio.NewReaderSize(f, 1<<16), cfg.Limit); err != nil {
			return nil, err
		}
		s.sessions()
		return s, nil
	}
	entries, err := readFile(path, cfg.Format, cfg.Limit)
	if err != nil {
		return nil, err
	}
	if s.tok != nil {
		for i := range entries {
			if entries[i].InputTokens, err = s.tok.count(entries[i].Text); err != nil {
				return nil, err
			}
		}
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("workload %s: no prompts", path)
	}
	if !cfg.Sequential {
		r := rand.New(rand.NewPCG(cfg.Seed, 0x5ff1e))
		r.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
	}
	s.entries = entries
	return s, nil
}

// CacheKey returns the key the synthetic text was drawn with: Config.CacheKey, or the one Open
// drew. A later run given it sends the same text.
func (s *Source) CacheKey() string { return s.key }

// Prompts says whether the prompts are this run's own: "per-run" (synthetic text, or a trace's,
// drawn with a fresh cache key), or "repeated across runs" and why (a cache_key, file prompts),
// which a server's prefix cache may hold from an earlier run.
func (s *Source) Prompts() string {
	switch {
	case len(s.entries) > 0:
		return "repeated across runs (file prompts)"
	case s.cfg.CacheKey != "":
		return "repeated across runs (cache_key)"
	}
	return "per-run (a fresh cache key)"
}

// Shares reports whether the prompts share text within the run (a shared prefix, turns of a
// session), which a server's prefix cache finds.
func (s *Source) Shares() bool { return s.cfg.SharedPrefix > 0 || s.cfg.Turns > 1 || len(s.trace) > 0 }

// Len returns the number of distinct file prompts or trace requests, or 0 for a synthetic
// workload.
func (s *Source) Len() int { return len(s.entries) + len(s.trace) }

// sessions links each trace request to the earlier requests of its session.
func (s *Source) sessions() {
	seen := map[string][]int{}
	s.earlier = make([][]int, len(s.trace))
	for i, e := range s.trace {
		if e.session == "" {
			continue
		}
		s.earlier[i] = slices.Clone(seen[e.session])
		seen[e.session] = append(seen[e.session], i)
	}
}

// Turns returns the requests of one session (Config.Turns), at least 1.
func (s *Source) Turns() int { return max(s.cfg.Turns, 1) }

// Prompt returns the prompt of request i (i >= 0). File prompts cycle when i passes Len. In a
// multi-turn session (Config.Turns) it carries the session's earlier turns as history.
func (s *Source) Prompt(i int) Prompt {
	p := s.single(i)
	for k := range s.cfg.Images.Count {
		p.Images = append(p.Images, s.images[(i*s.cfg.Images.Count+k)%len(s.images)])
	}
	turns := s.Turns()
	if turns == 1 || len(s.trace) > 0 {
		return p
	}
	first := i - i%turns
	for j := first; j < i; j++ {
		prev := s.single(j)
		reply := prev.OutputTokens
		if reply == 0 {
			reply = DefaultInputTokens // the server decided; a reply of some length
		}
		p.History = append(p.History,
			Message{Role: "user", Text: prev.Text},
			Message{Role: "assistant", Text: s.span(rand.New(rand.NewPCG(s.cfg.Seed^0xa55, Mix(uint64(j)))), reply, false)})
		p.InputTokens += prev.InputTokens + reply
	}
	return p
}

// single returns request i's own prompt, without history.
func (s *Source) single(i int) Prompt {
	r := rand.New(rand.NewPCG(s.cfg.Seed, Mix(uint64(i))))
	if len(s.trace) > 0 {
		return s.tracePrompt(i%len(s.trace), r)
	}
	if len(s.entries) > 0 {
		p := s.entries[i%len(s.entries)]
		if s.prefix != "" {
			p.Text = s.prefix + "\n\n" + p.Text
			p.InputTokens += s.cfg.SharedPrefix
		}
		if !s.cfg.OutputTokens.IsZero() {
			p.OutputTokens = max(s.cfg.OutputTokens.Int(r), 1)
		}
		return p
	}
	in := DefaultInputTokens
	if !s.cfg.InputTokens.IsZero() {
		in = max(s.cfg.InputTokens.Int(r), 1)
	}
	out := 0
	if !s.cfg.OutputTokens.IsZero() {
		out = max(s.cfg.OutputTokens.Int(r), 1)
	}
	unique := in
	if s.prefix != "" {
		unique = max(in-s.cfg.SharedPrefix, 1)
		in = s.cfg.SharedPrefix + unique
	}
	text := s.span(r, unique, s.prefix != "")
	if s.prefix != "" {
		text = s.prefix + " " + text
	}
	if s.tok != nil && !s.tok.exact {
		// A tokenizer whose count of a text is not the sum of its words' (checked at Open):
		// the text is made of words and counted as it is.
		if n, err := s.tok.count(text); err == nil {
			in = n
		}
	}
	return Prompt{Text: text, InputTokens: in, OutputTokens: out}
}

// window returns n consecutive corpus words starting at a random word.
func (s *Source) window(r *rand.Rand, n int) string {
	if n <= corpusWords {
		at := r.IntN(corpusWords - n + 1)
		return s.corpus[s.starts[at] : s.starts[at+n]-1]
	}
	var b strings.Builder
	for n > 0 {
		k := min(n, corpusWords)
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.corpus[:s.starts[k]-1])
		n -= k
	}
	return b.String()
}

func (s *Source) buildCorpus() {
	r := rand.New(rand.NewPCG(s.cfg.Seed^s.salt, 0xc0_4b05))
	var b strings.Builder
	s.starts = make([]int32, 0, corpusWords+1)
	s.ids = make([]uint16, 0, corpusWords)
	for range corpusWords {
		s.starts = append(s.starts, int32(b.Len()))
		w := r.IntN(len(Vocabulary))
		s.ids = append(s.ids, uint16(w))
		b.WriteString(Vocabulary[w])
		b.WriteByte(' ')
	}
	s.starts = append(s.starts, int32(b.Len()))
	s.corpus = b.String()
}

// words returns n seeded vocabulary words separated by spaces.
func words(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Vocabulary[r.IntN(len(Vocabulary))])
	}
	return b.String()
}

// Mix spreads consecutive integers (request numbers) over the 64-bit seed space: SplitMix64's
// finalizer, so that one PCG seeded per request gives unrelated streams.
func Mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// CountWords returns the number of whitespace-separated words in s: the token estimate used for
// prompts read from files and by the mockserver.
func CountWords(s string) int {
	n, in := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		space := c == ' ' || c == '\n' || c == '\t' || c == '\r'
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}

func readFile(path, format string, limit int) ([]Prompt, error) {
	f, err := readall.Open(path)
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	defer f.Close()
	return readPrompts(path, format, f, limit)
}

// readPrompts reads the prompts of a file in format ("" guesses it from path and the first
// byte) from r; path names the file in errors.
func readPrompts(path, format string, r io.Reader, limit int) ([]Prompt, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if format == "" {
		format = guessFormat(path, br)
	}
	switch format {
	case "jsonl":
		return readJSONL(path, br, limit)
	case "sharegpt":
		return readShareGPT(path, br, limit)
	}
	return nil, fmt.Errorf("workload %s: unknown format %q (want jsonl, sharegpt, or a trace: trace, mooncake, azure)", path, format)
}

func guessFormat(path string, br *bufio.Reader) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson":
		return "jsonl"
	}
	for i := 1; ; i++ {
		b, err := br.Peek(i)
		if err != nil || len(b) < i {
			return "jsonl"
		}
		switch b[i-1] {
		case ' ', '\t', '\r', '\n':
			continue
		case '[':
			return "sharegpt"
		}
		return "jsonl"
	}
}

// jsonlRecord is one line of a JSONL prompt file.
type jsonlRecord struct {
	Prompt       *string `json:"prompt"`
	Text         *string `json:"text"`
	OutputTokens int     `json:"output_tokens"`
	MaxTokens    int     `json:"max_tokens"`
}

func readJSONL(path string, br *bufio.Reader, limit int) ([]Prompt, error) {
	return readLines(path, br, limit, func(line int, b []byte) (Prompt, error) {
		var rec jsonlRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return Prompt{}, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		text := rec.Prompt
		if text == nil {
			text = rec.Text
		}
		if text == nil {
			return Prompt{}, fmt.Errorf(`%s:%d: no "prompt" (or "text") field`, path, line)
		}
		outTok := rec.OutputTokens
		if outTok == 0 {
			outTok = rec.MaxTokens
		}
		if outTok < 0 || outTok > result.MaxTokens {
			return Prompt{}, fmt.Errorf("%s:%d: output_tokens %d: want a count from 0 (the server decides) to %d", path, line, outTok, int(result.MaxTokens))
		}
		return Prompt{Text: *text, InputTokens: CountWords(*text), OutputTokens: outTok}, nil
	})
}

// readLines reads each non-blank line of r (trimmed, up to 64 MiB long) with parse, which is
// given the line's number from 1 for its errors; it stops after limit values when limit > 0.
func readLines[T any](path string, r io.Reader, limit int, parse func(line int, b []byte) (T, error)) ([]T, error) {
	var out []T
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		v, err := parse(line, b)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("workload %s: %w", path, err)
	}
	return out, nil
}

// shareGPTEntry is one conversation of a ShareGPT file.
type shareGPTEntry struct {
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

// readShareGPT streams the array so a large file is never held twice. Like vLLM's benchmark, it
// takes the first human turn as the prompt and the reply's length as the output length, and skips
// conversations without a reply.
func readShareGPT(path string, br *bufio.Reader, limit int) ([]Prompt, error) {
	dec := json.NewDecoder(br)
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", path, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("workload %s: a ShareGPT file is a JSON array", path)
	}
	var out []Prompt
	for n := 0; dec.More(); n++ {
		var e shareGPTEntry
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("workload %s: conversation %d: %w", path, n, err)
		}
		c := e.Conversations
		if len(c) < 2 || !isUser(c[0].From) || isUser(c[1].From) || c[0].Value == "" {
			continue
		}
		out = append(out, Prompt{Text: c[0].Value, InputTokens: CountWords(c[0].Value), OutputTokens: max(CountWords(c[1].Value), 1)})
		if limit > 0 && len(out) == limit {
			return out, nil
		}
	}
	if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("workload %s: %w", path, err)
	}
	return out, nil
}

func isUser(from string) bool { return from == "human" || from == "user" }
