package monitor

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/inferbench/inferbench/internal/base/unit"
	"github.com/inferbench/inferbench/result"
)

// DefaultInterval is the sampling period used when none is given.
const DefaultInterval = 100 * time.Millisecond

// DefaultMaxPoints bounds each timeline: 600 points is a minute at 100 ms before downsampling starts.
const DefaultMaxPoints = 600

// Kind says how a metric is aggregated over the window.
type Kind int

const (
	// Gauge is a level sampled over time (RSS, CPU %, power): it gets a timeline, a mean and a peak.
	Gauge Kind = iota
	// Total is one figure for the whole window (energy, bytes read, peak RSS from the kernel's
	// high-water mark), reported when the window closes.
	Total
)

// Better directions of a metric, as in the metric spec.
const (
	Lower  = "lower"
	Higher = "higher"
)

// Metric describes one figure a sampler reports.
type Metric struct {
	Name   string // e.g. "rss_mb"
	Unit   string // e.g. "MB" (mebibytes), "%", "W", "J"
	Better string // Lower, Higher, or "" when neither is better (temperature, clocks)
	Kind   Kind
	Help   string // one-line definition, used by docs and reports
}

// Value is one reading of a metric.
type Value struct {
	Name string
	V    float64
}

// Sampler reads one source of resource figures. Sample is called once per period from a single
// goroutine; it appends the readings taken at now to out and returns it.
type Sampler interface {
	Name() string
	Metrics() []Metric
	Sample(now time.Time, out []Value) ([]Value, error)
}

// Starter is an optional ability: a sampler that records a baseline when the window opens (energy
// counters, the kernel's peak-RSS mark). Start is called just before the first Sample.
type Starter interface {
	Start(now time.Time) error
}

// Stopper is an optional ability: a sampler that reports totals for the window (Kind Total
// metrics). Stop is called once after the last Sample.
type Stopper interface {
	Stop(now time.Time, out []Value) ([]Value, error)
}

// ErrNotAvailable marks a source that does not exist on this machine (no RAPL, no GPU, no
// permission). Constructors wrap it with the reason; it is reported, never treated as a failure.
var ErrNotAvailable = errors.New("not available")

// Option configures a Monitor.
type Option func(*Monitor)

// WithInterval sets the sampling period; non-positive values keep the default.
func WithInterval(d time.Duration) Option {
	return func(m *Monitor) {
		if d > 0 {
			m.interval = d
		}
	}
}

// WithUnavailable records sources that could not be opened (errors wrapping ErrNotAvailable, or
// any other error) so the report says why they are missing.
func WithUnavailable(errs ...error) Option {
	return func(m *Monitor) {
		for _, err := range errs {
			if err != nil {
				m.unavailable = append(m.unavailable, err.Error())
			}
		}
	}
}

// Monitor samples a set of Samplers from Start to Stop. A Monitor is used for one window.
type Monitor struct {
	samplers    []Sampler
	interval    time.Duration
	unavailable []string

	mu      sync.Mutex
	rec     *Recorder
	buf     []Value
	fails   map[string]*failure
	started bool
	stopped bool
	stop    chan struct{}
	done    chan struct{}
	start   time.Time
	cost    time.Duration // time spent sampling: CPU time of the sampling thread where measurable
	costCPU bool          // cost is CPU time (else wall time)
}

type failure struct {
	n     int
	first error
}

// New returns a Monitor over samplers. Nil samplers are ignored.
func New(samplers []Sampler, opts ...Option) *Monitor {
	m := &Monitor{interval: DefaultInterval, fails: map[string]*failure{}}
	for _, s := range samplers {
		if s != nil {
			m.samplers = append(m.samplers, s)
		}
	}
	for _, o := range opts {
		o(m)
	}
	var metrics []Metric
	for _, s := range m.samplers {
		metrics = append(metrics, s.Metrics()...)
	}
	m.rec = NewRecorder(metrics, DefaultMaxPoints)
	return m
}

// Start opens the window: it calls each Starter, takes the first sample and starts sampling in the
// background. A Starter's error is kept as a warning; the other samplers go on.
func (m *Monitor) Start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		return
	}
	m.started = true
	now := time.Now()
	m.start = now
	m.rec.Begin(now)
	for _, s := range m.samplers {
		if st, ok := s.(Starter); ok {
			if err := st.Start(now); err != nil {
				m.fail(s.Name(), err)
			}
		}
	}
	m.sampleLocked(now)
	m.stop = make(chan struct{})
	m.done = make(chan struct{})
	go m.loop()
}

func (m *Monitor) loop() {
	defer close(m.done)
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case now := <-t.C:
			m.mu.Lock()
			if !m.stopped {
				m.sampleLocked(now)
			}
			m.mu.Unlock()
		}
	}
}

func (m *Monitor) sampleLocked(now time.Time) {
	d, cpu := costClock(func() {
		for _, s := range m.samplers {
			var err error
			m.buf, err = s.Sample(now, m.buf[:0])
			if err != nil {
				m.fail(s.Name(), err)
			}
			m.rec.Add(now, m.buf)
		}
	})
	m.cost += d
	m.costCPU = cpu
}

func (m *Monitor) fail(name string, err error) {
	f := m.fails[name]
	if f == nil {
		f = &failure{first: err}
		m.fails[name] = f
	}
	f.n++
}

// Stop closes the window: it takes a last sample, collects the samplers' totals and returns the
// window's resources: run.json's extra.resources without what the run adds (tree, grid, energy
// sources, memory growth, overhead). Calling Stop again returns the same; Stop without Start
// returns an empty one.
func (m *Monitor) Stop() *result.Resources {
	m.mu.Lock()
	if !m.started {
		m.mu.Unlock()
		return &result.Resources{IntervalMS: unit.MS(m.interval), Unavailable: m.unavailable}
	}
	if m.stopped {
		r := m.rec.Report()
		m.mu.Unlock()
		return m.finish(r)
	}
	m.stopped = true
	close(m.stop)
	m.mu.Unlock()
	<-m.done

	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	m.sampleLocked(now)
	for _, s := range m.samplers {
		if st, ok := s.(Stopper); ok {
			var err error
			m.buf, err = st.Stop(now, m.buf[:0])
			if err != nil {
				m.fail(s.Name(), err)
			}
			m.rec.Add(now, m.buf)
		}
	}
	m.rec.End(now)
	return m.finish(m.rec.Report())
}

func (m *Monitor) finish(r *result.Resources) *result.Resources {
	if m.started {
		m.explain(r)
	}
	r.IntervalMS = unit.MS(m.interval)
	r.DurationS = r.Duration().Seconds()
	r.CostS = m.cost.Seconds()
	r.CostClock = "wall"
	if m.costCPU {
		r.CostClock = "thread-cpu"
	}
	if d := r.Duration().Seconds(); d > 0 {
		r.CostPct = 100 * r.CostS / d
	}
	r.Unavailable = append([]string(nil), m.unavailable...)
	names := slices.Sorted(maps.Keys(m.fails))
	for _, n := range names {
		f := m.fails[n]
		r.Warnings = append(r.Warnings, fmt.Sprintf("monitor %s: %d failed reading(s), first: %v", n, f.n, f.first))
	}
	return r
}

// Close releases samplers that hold resources (NVML handles, nvidia-smi processes).
func Close(samplers []Sampler) error {
	var errs []error
	for _, s := range samplers {
		if c, ok := s.(io.Closer); ok && s != nil {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("monitor %s: %w", s.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}
