package monitor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/inferbench/inferbench/internal/base/registry"
)

// Config configures the samplers of a run. The zero value samples the real /proc and /sys at the
// default interval.
type Config struct {
	Interval time.Duration // sampling period; 0 means DefaultInterval
	ProcRoot string        // procfs mount point; "" means /proc
	SysRoot  string        // sysfs mount point; "" means /sys
	NoSystem bool          // leave out the system sampler
	NoRAPL   bool          // leave out RAPL energy
	// Disabled names registered sources to leave out ("gpu").
	Disabled []string
}

// Source opens an optional sampler for a run, such as the GPU sampler that monitor/gpu registers.
// It returns an error wrapping ErrNotAvailable when its resource is absent.
type Source func(ctx context.Context, cfg Config) (Sampler, error)

var sources = registry.New[Source]("monitor: source")

// RegisterSource makes an optional source available to Open; packages with heavy dependencies
// (monitor/gpu) register themselves when imported, so only the binary that wants them links them.
// It panics on a duplicate name.
func RegisterSource(name string, s Source) { sources.Add(name, s) }

// Helper is an optional ability: a sampler that runs processes of its own (nvidia-smi) reports
// them so the process-tree sampler leaves them out of the tree under test.
type Helper interface {
	HelperPIDs() []int
}

// Sources are the samplers of a run, opened once and shared by the windows of every scenario.
type Sources struct {
	cfg         Config
	samplers    []Sampler
	unavailable []error
}

// Open opens the system and RAPL samplers and every registered source. Sources that are absent
// are listed by Unavailable; Open itself does not fail.
func Open(ctx context.Context, cfg Config) *Sources {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	s := &Sources{cfg: cfg}
	add := func(x Sampler, err error) {
		if err != nil {
			s.unavailable = append(s.unavailable, err)
			return
		}
		s.samplers = append(s.samplers, x)
	}
	if !cfg.NoSystem {
		add(NewSystemSampler(cfg.ProcRoot))
	}
	if !cfg.NoRAPL {
		add(NewRAPLSampler(cfg.SysRoot))
	}
	for _, n := range sources.Names() {
		if slices.Contains(cfg.Disabled, n) {
			continue
		}
		open, _ := sources.Get(n)
		x, err := open(ctx, cfg)
		if err == nil && x == nil {
			err = fmt.Errorf("%s: %w", n, ErrNotAvailable)
		}
		add(x, err)
	}
	return s
}

// Samplers returns the run-wide samplers (without the per-scenario process sampler).
func (s *Sources) Samplers() []Sampler { return s.samplers }

// Unavailable returns why absent sources are absent, one error per source.
func (s *Sources) Unavailable() []error { return s.unavailable }

// Monitor returns a Monitor for one window over the run's samplers and a process-tree sampler of
// the tree rooted at pids (nil: the harness itself). Helper processes of the samplers are left out
// of the tree.
func (s *Sources) Monitor(pids func() []int, opts ...Option) *Monitor {
	var helpers []Helper
	for _, x := range s.samplers {
		if h, ok := x.(Helper); ok {
			helpers = append(helpers, h)
		}
	}
	pcfg := ProcessConfig{Root: s.cfg.ProcRoot, PIDs: pids}
	if len(helpers) > 0 {
		pcfg.Exclude = func() []int {
			var out []int
			for _, h := range helpers {
				out = append(out, h.HelperPIDs()...)
			}
			return out
		}
	}
	samplers := make([]Sampler, 0, len(s.samplers)+1)
	var errs []error
	if p, err := NewProcessSampler(pcfg); err == nil {
		samplers = append(samplers, p)
	} else {
		errs = append(errs, err)
	}
	samplers = append(samplers, s.samplers...)
	all := append([]Option{WithInterval(s.cfg.Interval), WithUnavailable(append(errs, s.unavailable...)...)}, opts...)
	return New(samplers, all...)
}

// Close releases the samplers.
func (s *Sources) Close() error {
	if s == nil {
		return nil
	}
	return errors.Join(Close(s.samplers))
}
