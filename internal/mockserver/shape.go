package mockserver

import (
	"fmt"
	"slices"
	"strings"
)

// Shapes the server's streams can take, as the servers it stands for send them (the fixtures
// under subject/openai/testdata/streams are recorded from each).
const (
	// ShapeDefault is OpenAI's layout without its extra fields: a role-only chunk, content chunks,
	// a finish chunk, a usage chunk with no choices; with include_usage, "usage": null on the others.
	ShapeDefault = ""
	// ShapeVLLM is vLLM's: as the default, but no "usage" field before the usage chunk, and the
	// finish chunk's delta has an empty content.
	ShapeVLLM = "vllm"
	// ShapeSGLang is SGLang's: every delta lists role, content, reasoning_content and tool_calls,
	// every choice matched_stop, and every chunk "usage" (null until the usage chunk).
	ShapeSGLang = "sglang"
	// ShapeTGI is Text Generation Inference's: no role-only chunk (every content delta carries the
	// role), the last content chunk carries the finish reason, a comment (":") opens the stream.
	ShapeTGI = "tgi"
	// ShapeLlamaCPP is llama.cpp's server's: a role-only chunk whose content is null; the finish
	// chunk carries usage and the server's timings, and there is no separate usage chunk.
	ShapeLlamaCPP = "llamacpp"
	// ShapeOpenAI is OpenAI's API: the default layout with refusal in the role delta, a
	// system_fingerprint, service_tier and obfuscation on every chunk.
	ShapeOpenAI = "openai"
)

// Shapes lists the shapes by name.
var Shapes = []string{ShapeVLLM, ShapeSGLang, ShapeTGI, ShapeLlamaCPP, ShapeOpenAI}

// checkShape reports an unknown shape.
func checkShape(s string) error {
	if s == ShapeDefault || slices.Contains(Shapes, s) {
		return nil
	}
	return fmt.Errorf("mockserver shape %q unknown (want one of %s)", s, strings.Join(Shapes, ", "))
}

// shape holds the pieces of one shape's chunks, inside "choices":[{"index":0, ... and after it.
// A chunk is head + piece + (usage null when usageNull and include_usage) + extra + "}\n\n".
type shape struct {
	opening     string // written before the first event: a comment
	role        string // the role-only choice, or "" when the shape has none
	textOpen    string // a content choice up to its text
	textClose   string // the rest of a content choice
	lastClose   string // the rest of the last content choice when it carries the finish reason ("%s": the reason), else ""
	finish      string // the finish choice ("%s": the reason), when lastClose is ""
	usageNull   bool   // with include_usage, every chunk before the usage chunk has "usage": null
	alwaysUsage bool   // every chunk has "usage" (null until the usage chunk), asked or not
	usageInLast bool   // usage (and timings) in the finish chunk, no usage chunk
	timings     bool   // llama.cpp's timings object in the finish chunk
	extra       string // top-level fields after the choices (and usage) of every chunk
}

// shapeOf returns the pieces of a shape for chat or completions streams.
func shapeOf(name string, chat bool) shape {
	if !chat {
		sh := shape{textOpen: `"text":"`, textClose: `","logprobs":null,"finish_reason":null}]`,
			finish: `"text":"","logprobs":null,"finish_reason":"%s"}]`, usageNull: true}
		if name == ShapeLlamaCPP {
			sh.usageNull, sh.usageInLast, sh.timings = false, true, true
		}
		return sh
	}
	switch name {
	case ShapeVLLM:
		return shape{
			role:     `"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]`,
			textOpen: `"delta":{"content":"`, textClose: `"},"logprobs":null,"finish_reason":null}]`,
			finish: `"delta":{"content":""},"logprobs":null,"finish_reason":"%s"}]`,
		}
	case ShapeSGLang:
		return shape{
			role:     `"delta":{"role":"assistant","content":"","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}]`,
			textOpen: `"delta":{"role":null,"content":"`, textClose: `","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}]`,
			finish:      `"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"%s","matched_stop":null}]`,
			alwaysUsage: true,
		}
	case ShapeTGI:
		return shape{
			opening:  ":\n\n",
			textOpen: `"delta":{"role":"assistant","content":"`, textClose: `"},"logprobs":null,"finish_reason":null}]`,
			lastClose: `"},"logprobs":null,"finish_reason":"%s"}]`,
			usageNull: true, extra: `,"system_fingerprint":"3.0.1-native"`,
		}
	case ShapeLlamaCPP:
		return shape{
			role:     `"finish_reason":null,"delta":{"role":"assistant","content":null}}]`,
			textOpen: `"finish_reason":null,"delta":{"content":"`, textClose: `"}}]`,
			finish:      `"finish_reason":"%s","delta":{}}]`,
			usageInLast: true, timings: true, extra: `,"system_fingerprint":"b6000-mock"`,
		}
	case ShapeOpenAI:
		return shape{
			role:     `"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]`,
			textOpen: `"delta":{"content":"`, textClose: `"},"logprobs":null,"finish_reason":null}]`,
			finish:    `"delta":{},"logprobs":null,"finish_reason":"%s"}]`,
			usageNull: true, extra: `,"service_tier":"default","system_fingerprint":"fp_mock","obfuscation":"x"`,
		}
	}
	return shape{
		role:     `"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]`,
		textOpen: `"delta":{"content":"`, textClose: `"},"logprobs":null,"finish_reason":null}]`,
		finish:    `"delta":{},"logprobs":null,"finish_reason":"%s"}]`,
		usageNull: true,
	}
}
