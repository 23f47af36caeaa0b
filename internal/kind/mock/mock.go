// Package mock is a simulated model for demos and tests: each call really waits for a latency
// drawn from a seeded lognormal distribution that depends on the variant (eager, compiled,
// kernelized) and the batch size; the first call of a compiled variant is slow, standing for
// compilation; in generation mode it streams tokens with a time to first token and an inter-token
// gap; and it can inject failures. The same seed gives the same sequence of target durations.
package mock

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/inferbench/inferbench/internal/base/precise"
	"github.com/inferbench/inferbench/subject"
)

// Config is the `subject:` block of a mock definition. Scenario parameters with the same names
// (latency_ms, fail_rate, ...) override it, and `variant` and `batch_size` shape the latency.
// The fields with a default are pointers, so that an explicit 0 (no latency, no jitter, no
// compile time) is kept rather than taken for "not given" (latency_ms: 0 used to run at 10 ms).
type Config struct {
	LatencyMS   *float64           `yaml:"latency_ms"`  // eager latency at batch size 1 (default 10)
	PerItemMS   *float64           `yaml:"per_item_ms"` // added per batch item beyond the first (default latency_ms/10)
	Jitter      *float64           `yaml:"jitter"`      // lognormal sigma (default 0.05)
	Variants    map[string]float64 `yaml:"variants"`    // latency multiplier per variant
	CompileMS   *float64           `yaml:"compile_ms"`  // extra first-call time for non-eager variants (default 20 x latency)
	LoadMS      float64            `yaml:"load_ms"`     // time to "load the model" when opened
	FailRate    float64            `yaml:"fail_rate"`   // probability that a call fails
	Seed        uint64             `yaml:"seed"`        // default 1
	Generate    *Generate          `yaml:"generate"`    // stream tokens instead of one response
	MemoryMB    float64            `yaml:"memory_mb"`   // reported peak memory at batch 1 (0: none)
	MemoryPerMB float64            `yaml:"memory_per_item_mb"`
}

// Generate configures token streaming.
type Generate struct {
	OutputTokens int      `yaml:"output_tokens"` // tokens per sequence and call (default 16; parameter max_new_tokens overrides)
	TTFTMS       *float64 `yaml:"ttft_ms"`       // time to first token, eager at batch 1 (default latency_ms); variant and batch scale it
	ITLMS        *float64 `yaml:"itl_ms"`        // gap between steps, eager at batch 1 (default latency_ms/5); variant and batch scale it
}

// generation is an open model's token stream: its figures for the scenario's variant and batch.
type generation struct {
	OutputTokens int     // per sequence and call
	TTFTMS       float64 // time to first token
	ITLMS        float64 // gap between steps
}

// or is *v, or def when v is nil (not given).
func or(v *float64, def float64) float64 {
	if v == nil {
		return def
	}
	return *v
}

// DefaultVariants are the latency multipliers of the variants a mock model knows.
var DefaultVariants = map[string]float64{"eager": 1.0, "compiled": 0.72, "kernelized": 0.55}

// Validate checks the configuration.
func (c *Config) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"latency_ms", or(c.LatencyMS, 0)}, {"per_item_ms", or(c.PerItemMS, 0)}, {"jitter", or(c.Jitter, 0)},
		{"compile_ms", or(c.CompileMS, 0)}, {"load_ms", c.LoadMS}, {"memory_mb", c.MemoryMB}, {"memory_per_item_mb", c.MemoryPerMB},
	} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s %v: must be a finite number, not negative", f.name, f.v)
		}
	}
	if g := c.Generate; g != nil {
		if g.OutputTokens < 0 {
			return fmt.Errorf("generate.output_tokens %d: must not be negative", g.OutputTokens)
		}
		for name, v := range map[string]float64{"generate.ttft_ms": or(g.TTFTMS, 0), "generate.itl_ms": or(g.ITLMS, 0)} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s %v: must be a finite number, not negative", name, v)
			}
		}
	}
	if c.FailRate < 0 || c.FailRate > 1 {
		return fmt.Errorf("fail_rate %v is outside [0, 1]", c.FailRate)
	}
	return nil
}

func init() {
	subject.Register(subject.Kind{
		Name:   "mock",
		Config: func() any { return &Config{} },
		Open:   Open,
	})
}

// Model is an open mock subject.
type Model struct {
	latency, jitter, compile, failRate float64
	memory                             float64
	gen                                *generation
	batch                              int
	mu                                 sync.Mutex // a concurrency load calls Do from several goroutines
	rng                                *rand.Rand
	calls                              int
}

var (
	_ subject.Subject = (*Model)(nil)
	_ subject.Setup   = (*Model)(nil)
)

// SetupValues reports the simulated framework's compile time (compile_time_ms) for a variant
// that compiles; an eager model reports nothing.
func (m *Model) SetupValues() map[string]float64 {
	if m.compile <= 0 {
		return nil
	}
	return map[string]float64{"compile_time_ms": m.compile}
}

// Open opens a mock model for one scenario.
func Open(ctx context.Context, s subject.Spec) (subject.Subject, error) {
	c, _ := s.Config.(*Config)
	if c == nil {
		c = &Config{}
	}
	p := s.Params
	base := p.Float("latency_ms", or(c.LatencyMS, 10))
	perItem := p.Float("per_item_ms", or(c.PerItemMS, base/10))
	if base < 0 || perItem < 0 {
		return nil, fmt.Errorf("mock: latency_ms %v, per_item_ms %v: must not be negative", base, perItem)
	}
	variants := c.Variants
	if variants == nil {
		variants = DefaultVariants
	}
	variant := p.String("variant", "eager")
	mult, ok := variants[variant]
	if !ok {
		return nil, fmt.Errorf("mock: unknown variant %q (known: eager, compiled, kernelized or the config's variants)", variant)
	}
	batch := max(p.Int("batch_size", 1), 1)
	m := &Model{
		latency:  (base + perItem*float64(batch-1)) * mult,
		jitter:   p.Float("jitter", or(c.Jitter, 0.05)),
		failRate: p.Float("fail_rate", c.FailRate),
		batch:    batch,
	}
	if variant != "eager" {
		m.compile = or(c.CompileMS, 20*base)
	}
	if c.MemoryMB > 0 {
		m.memory = c.MemoryMB + c.MemoryPerMB*float64(batch)
	}
	if c.Generate != nil {
		// ttft_ms and itl_ms are eager figures at batch 1: the variant and the batch size scale
		// them as they scale latency_ms (a step of a batch takes longer, and carries one token
		// per sequence).
		scale := mult
		if base > 0 {
			scale *= (base + perItem*float64(batch-1)) / base
		}
		g := generation{
			OutputTokens: p.Int("max_new_tokens", c.Generate.OutputTokens),
			TTFTMS:       or(c.Generate.TTFTMS, base) * scale,
			ITLMS:        or(c.Generate.ITLMS, base/5) * scale,
		}
		if g.OutputTokens <= 0 {
			g.OutputTokens = 16
		}
		m.gen = &g
	}
	seed := c.Seed
	if seed == 0 {
		seed = 1
	}
	h := fnv.New64a()
	h.Write([]byte(s.Benchmark + "/" + s.Scenario))
	m.rng = rand.New(rand.NewPCG(seed, h.Sum64()))
	if err := sleep(ctx, c.LoadMS); err != nil {
		return nil, err
	}
	return m, nil
}

// draw returns a lognormal duration in ms whose median is med.
func (m *Model) draw(med float64) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return med * math.Exp(m.jitter*m.rng.NormFloat64())
}

// Do simulates one inference.
func (m *Model) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	m.mu.Lock()
	first := m.calls == 0
	m.calls++
	fail := m.failRate > 0 && m.rng.Float64() < m.failRate
	m.mu.Unlock()
	var o subject.Observation
	o.Start = time.Now()
	o.Scheduled = r.Scheduled
	if m.gen == nil {
		d := m.draw(m.latency)
		if first {
			d += m.compile
		}
		if err := sleep(ctx, d); err != nil {
			return o, err
		}
	} else {
		ttft := m.draw(m.gen.TTFTMS)
		if first {
			ttft += m.compile
		}
		if err := sleep(ctx, ttft); err != nil {
			return o, err
		}
		// One step of a batch delivers one token per sequence, as the torch_llm worker reports.
		o.FirstToken = time.Now()
		o.Tokens = append(o.Tokens, subject.TokenEvent{At: o.FirstToken, Tokens: m.batch})
		for i := 1; i < m.gen.OutputTokens; i++ {
			if err := sleep(ctx, m.draw(m.gen.ITLMS)); err != nil {
				return o, err
			}
			o.Tokens = append(o.Tokens, subject.TokenEvent{At: time.Now(), Tokens: m.batch})
		}
		o.OutputTokens = m.gen.OutputTokens * m.batch
	}
	o.End = time.Now()
	o.Items = m.batch
	if m.memory > 0 {
		o.Values = map[string]float64{"memory_mb": m.memory}
	}
	if fail {
		return o, fmt.Errorf("mock: injected failure on call %d", r.Index)
	}
	return o, nil
}

// Close does nothing.
func (m *Model) Close() error { return nil }

// sleep waits msec milliseconds to within tens of microseconds (precise.Sleep): a runtime timer
// alone ends on a 1 ms grid when the process is otherwise idle (10 ms measured 10.4-10.8 ms),
// and the model's latency would not be what its definition says.
func sleep(ctx context.Context, msec float64) error {
	return precise.Sleep(ctx, time.Duration(msec*float64(time.Millisecond)))
}
