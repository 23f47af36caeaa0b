package openai

import (
	"errors"
	"fmt"
	"math"

	"github.com/inferbench/inferbench/internal/figures"
	"github.com/inferbench/inferbench/subject"
	"github.com/valyala/fastjson"
)

// chunkInfo is what the subject reads from a streamed chunk or a whole response.
type chunkInfo struct {
	text     []byte // generated text, reasoning included (only when collected)
	textLen  int    // its length in bytes
	finished bool   // a choice has a finish_reason
	errored  bool   // the chunk is an error object
	usageOut int    // usage.completion_tokens, or -1
	usageIn  int    // usage.prompt_tokens, or -1
	timings  *serverTimings
	emit     emitInfo // its said is false when the chunk had none
}

// EmitField is the field of a stream's last chunk where the mockserver says which content events
// it wrote together: {"first_together": bool, "together": n}, n being the events written in one
// write with the one before them. A client reading two events in one read cannot tell otherwise
// whether the server sent them together or the client read late.
const EmitField = "mock_emit"

// emitInfo is what the server says it wrote together (EmitField). A value in chunkInfo, not a
// pointer: the mockserver sends it with every stream, and a pointer was an allocation each.
type emitInfo struct {
	said     bool // the chunk had the field
	first    bool
	together int
}

// values adds the server's figures to an observation's values, for the load's coalescing
// warning (figures.ValueServerFirstTogether).
func (e *emitInfo) values(o *subject.Observation) {
	if !e.said {
		return
	}
	if o.Values == nil {
		o.Values = map[string]float64{}
	}
	first := 0.0
	if e.first {
		first = 1
	}
	o.Values[figures.ValueServerFirstTogether] = first
	o.Values[figures.ValueServerTogether] = float64(max(e.together, 0))
}

// serverTimings is llama.cpp's per-request "timings" object (its server sends it with the last
// chunk or the whole response): prompt processing and generation as the server timed them.
type serverTimings struct {
	promptMS, predictedMS, predictedPerTokenMS float64
	promptN, predictedN                        int
}

// values adds the server's timings to an observation's values (metrics server_*_ms).
func (t *serverTimings) values(o *subject.Observation) {
	if t == nil {
		return
	}
	if o.Values == nil {
		o.Values = map[string]float64{}
	}
	o.Values["server_prompt_ms"] = t.promptMS
	o.Values["server_predicted_ms"] = t.predictedMS
	if t.predictedN > 0 {
		o.Values["server_predicted_per_token_ms"] = t.predictedPerTokenMS
	}
}

// Note: chunks are parsed with fastjson rather than encoding/json: at 5,000 streamed requests/s
// with 32 events each, encoding/json's reflection took a third of the client's CPU.

// parseChunk reads data; with collect it copies the generated text into info.text.
func parseChunk(p *fastjson.Parser, data []byte, collect bool) (chunkInfo, error) {
	c := chunkInfo{usageOut: -1, usageIn: -1}
	v, err := p.ParseBytes(data)
	if err != nil {
		return c, err
	}
	if v.Type() != fastjson.TypeObject {
		return c, fmt.Errorf("a chunk is a JSON object, not %s", v.Type())
	}
	if e := v.Get("error"); e != nil && e.Type() != fastjson.TypeNull {
		c.errored = true
		return c, nil
	}
	add := func(b []byte) {
		c.textLen += len(b)
		if collect {
			c.text = append(c.text, b...)
		}
	}
	for _, ch := range v.GetArray("choices") {
		for _, key := range [...]string{"delta", "message"} {
			if m := ch.Get(key); m != nil {
				// reasoning_content: vLLM, SGLang, DeepSeek; reasoning: Ollama, OpenRouter.
				for _, f := range [...]string{"reasoning_content", "reasoning", "content"} {
					add(m.GetStringBytes(f))
				}
				// Tool-call deltas are generated tokens too: the function's name, then its
				// arguments, piece by piece (OpenAI, vLLM, SGLang, llama.cpp, Ollama).
				for _, tc := range m.GetArray("tool_calls") {
					add(tc.GetStringBytes("function", "name"))
					add(tc.GetStringBytes("function", "arguments"))
				}
			}
		}
		add(ch.GetStringBytes("text"))
		if len(ch.GetStringBytes("finish_reason")) > 0 {
			c.finished = true
		}
	}
	if u := v.Get("usage"); u != nil && u.Type() == fastjson.TypeObject {
		for i, key := range [...]string{"completion_tokens", "prompt_tokens"} {
			n := u.Get(key)
			if n == nil || n.Type() != fastjson.TypeNumber {
				continue
			}
			v, err := tokenCount(n)
			if err != nil {
				return c, fmt.Errorf("usage.%s = %s: %v", key, n, err)
			}
			if i == 0 {
				c.usageOut = v
			} else {
				c.usageIn = v
			}
		}
	}
	if e := v.Get(EmitField); e != nil && e.Type() == fastjson.TypeObject {
		c.emit = emitInfo{said: true, first: e.GetBool("first_together"), together: e.GetInt("together")}
	}
	if t := v.Get("timings"); t != nil && t.Type() == fastjson.TypeObject {
		c.timings = &serverTimings{
			promptMS: t.GetFloat64("prompt_ms"), predictedMS: t.GetFloat64("predicted_ms"),
			predictedPerTokenMS: t.GetFloat64("predicted_per_token_ms"),
			promptN:             t.GetInt("prompt_n"), predictedN: t.GetInt("predicted_n"),
		}
	}
	return c, nil
}

// MaxTokenCount bounds a token count a server reports in usage: more is not a count.
const MaxTokenCount = 1 << 31

// tokenCount reads a usage count: a whole number from 0 to MaxTokenCount, written as an integer
// or as a float with no fraction (2.0). NaN, infinities (1e400), fractions and negative
// numbers are errors, never 0 tokens.
func tokenCount(n *fastjson.Value) (int, error) {
	f, err := n.Float64()
	switch {
	case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		return 0, errors.New("not a finite number")
	case f < 0:
		return 0, errors.New("a token count cannot be negative")
	case f != math.Trunc(f):
		return 0, errors.New("a token count is a whole number")
	case f > MaxTokenCount:
		return 0, fmt.Errorf("above %d, not a token count", MaxTokenCount)
	}
	return int(f), nil
}
