package cli

import (
	"github.com/spf13/pflag"

	"github.com/inferbench/inferbench/subject/exec"
	"github.com/inferbench/inferbench/suite"
)

// execQuick is `inferbench run --exec 'CMD'`: a benchmark of a command without a definition.
type execQuick struct {
	command string
	shell   bool
	name    string
	metrics bool
}

func (q *execQuick) Flags(f *pflag.FlagSet) {
	f.StringVar(&q.command, "exec", "", "benchmark this command (no definition needed); split like a shell, run without one")
	f.BoolVar(&q.shell, "shell", false, "with --exec: run the command through /bin/sh -c")
	f.StringVar(&q.name, "name", "exec", "with --exec: the benchmark's name")
	f.BoolVar(&q.metrics, "exec-metrics", false, "with --exec: read a JSON object of metrics from the command's last stdout line")
}

func (q *execQuick) Benchmarks(o *IO, sel *selection) ([]*suite.Benchmark, error) {
	if q.command == "" {
		return nil, nil
	}
	cfg := &exec.Config{Command: q.command, Shell: q.shell}
	if q.metrics {
		cfg.Metrics = "json"
	}
	if err := cfg.Validate(); err != nil {
		return nil, usageErr("--exec: %v", err)
	}
	return []*suite.Benchmark{{
		Name: q.name, Kind: "exec", Config: cfg, File: "(command line)", Dir: workDir(o),
	}}, nil
}
