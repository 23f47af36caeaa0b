package subject_test

import (
	"context"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/inferbench/inferbench/internal/engine"
	"github.com/inferbench/inferbench/load"
	"github.com/inferbench/inferbench/subject"
	"github.com/inferbench/inferbench/suite"
)

// checksumConfig is the kind's `subject:` block: `subject: {kind: example-checksum, size: 4096}`.
type checksumConfig struct {
	Size int `yaml:"size"`
}

// checksum is a subject: one CRC of a buffer per call.
type checksum struct{ buf []byte }

var _ subject.Subject = (*checksum)(nil)

func (c *checksum) Do(ctx context.Context, r subject.Request) (subject.Observation, error) {
	start := time.Now()
	_ = crc32.ChecksumIEEE(c.buf)
	// Start and End time the call (latency_ms); Values carries figures only the subject knows.
	return subject.Observation{Start: start, End: time.Now(), Values: map[string]float64{"bytes": float64(len(c.buf))}}, nil
}

func (c *checksum) Close() error { return nil }

// Declared gives the unit and direction of the figure the subject reports (subject.Declarer).
func (c *checksum) Declared() map[string]subject.MetricInfo {
	return map[string]subject.MetricInfo{"bytes": {Unit: "bytes", Better: "higher"}}
}

// A subject kind is registered once (in an init function) under the name definitions give as
// `kind:`. Open runs once per scenario with the decoded config and the scenario's parameters;
// the engine calls Do once per iteration and turns the observations into metrics.
func ExampleRegister() {
	subject.Register(subject.Kind{
		Name:   "example-checksum",
		Config: func() any { return &checksumConfig{Size: 1024} },
		Open: func(ctx context.Context, s subject.Spec) (subject.Subject, error) {
			size := s.Params.Int("size", s.Config.(*checksumConfig).Size)
			return &checksum{buf: make([]byte, size)}, nil
		},
	})

	// The same benchmark as the definition `{name: crc, subject: {kind: example-checksum},
	// params: {size: 4096}}`.
	warmup, iterations := 2, 50
	bench := &suite.Benchmark{
		Name: "crc", Kind: "example-checksum", Config: &checksumConfig{Size: 1024},
		Params: map[string]any{"size": 4096},
		Load:   load.Config{WarmupIterations: &warmup, MeasurementIterations: &iterations},
	}
	e := engine.New()
	defer e.Close()
	for _, sc := range bench.Expand(nil) {
		r := e.RunScenario(context.Background(), sc)
		bytes, _ := r.Metrics["bytes"].Center()
		fmt.Printf("%s: %s, %d measured, %.0f %s, latency in %s\n",
			r.ID(), r.Status, r.Iterations.Measured, bytes, r.Metrics["bytes"].Unit, r.Metrics["latency_ms"].Unit)
	}
	// Output:
	// crc/default: ok, 50 measured, 4096 bytes, latency in ms
}
