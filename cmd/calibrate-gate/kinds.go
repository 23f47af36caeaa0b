package main

import (
	"fmt"
	"strconv"
)

// A kind is one subject kind's calibration scenario: the files of its workspace, the
// environment of the unchanged scenario, and the environment that slows its primary metric by
// 10%. The slowdown enters through the environment (${VAR} in the definition, os.Getenv in the
// function), never through a parameter, so that compare matches the two runs' scenarios.
type kind struct {
	name     string
	scenario string            // what one iteration does, for the table
	files    map[string]string // workspace files
	flags    []string          // run flags beyond the defaults
	primary  string            // the primary metric whose slowdown is measured
	base     map[string]string
	// slow returns the slowed environment, given the primary metric's median over the
	// history runs (ms).
	slow     func(median float64) map[string]string
	injected string // how the slowdown is injected, for the table
	// pairs compares every pair of a few runs instead of a chain of many: for subjects whose
	// runs cost seconds (a Python worker importing torch).
	pairs bool
}

// binEnv names the variable holding the inferbench binary (this program, which is one).
const binEnv = "CAL_INFERBENCH"

// pythonEnv names the variable holding the interpreter of the CPU-bound Python command (-python,
// else python3).
const pythonEnv = "CAL_PYTHON"

// calSquares is the CPU-bound Python work of the exec-python and pyfunc kinds: $CAL_N squares
// summed in the interpreter (no allocation, no I/O).
const calSquares = `"""The gate's calibration (cmd/calibrate-gate): CPU-bound Python, CAL_N squares summed."""
import os

_n = int(os.environ.get("CAL_N", "1000"))


def squares():
    s = 0
    for i in range(_n):
        s += i * i
    return s`

// calTorch is the worker kind's benchmark: a tiny torch model, $CAL_REPEAT forward passes a
// call on one thread.
const calTorch = `"""The gate's calibration (cmd/calibrate-gate): a tiny torch model, CAL_REPEAT forward passes a call."""
import os

import torch

torch.set_num_threads(1)
torch.manual_seed(0)
_model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).eval()
_x = torch.randn(8, 64)
_repeat = int(os.environ.get("CAL_REPEAT", "200"))


def run_tiny_mlp():
    with torch.no_grad():
        for _ in range(_repeat):
            _model(_x)
`

// calOpenAI is the openai kind's definition: OpenAI streaming against this binary's mockserver,
// whose TTFT is $CAL_TTFT_MS.
const calOpenAI = `name: cal-openai
description: "the gate's calibration (cmd/calibrate-gate): OpenAI streaming against the mockserver"
server:
  command: ["${` + binEnv + `}", mockserver, --addr, "127.0.0.1:{port}", --ttft-ms, "${CAL_TTFT_MS}", --itl-ms, "1", --output-tokens, "8"]
  ready: tcp://127.0.0.1:{port}
subject: {kind: openai, url: "http://127.0.0.1:{port}/v1", model: mock}
`

// kinds are the subject kinds of the timed calibration, in the order of its table.
func kinds() []kind {
	return []kind{
		{
			name:     "exec",
			scenario: "`sleep 0.01`",
			files: map[string]string{"benches/cal.yaml": `name: cal-exec
description: "the gate's calibration (cmd/calibrate-gate): a command per iteration"
subject: {kind: exec, command: [sleep, "${CAL_SLEEP_S}"]}
`},
			primary: "latency_ms",
			base:    map[string]string{"CAL_SLEEP_S": "0.01"},
			// The round trip is the sleep plus the process's start: 10% of the measured
			// latency is added to the sleep.
			slow: func(m float64) map[string]string {
				return map[string]string{"CAL_SLEEP_S": strconv.FormatFloat(0.01+0.1*m/1000, 'f', 6, 64)}
			},
			injected: "sleep + 10% of the measured latency",
		},
		{
			name: "exec-python",
			// The loop is most of the command's CPU time, so that 1.1× the loop is close to +10%:
			// at 300,000 squares (about 16 ms of 26 ms) the slowdown measured about +6%.
			scenario: "a CPU-bound Python command: `python3 -S` summing 1,000,000 squares",
			files: map[string]string{
				"benches/cal.yaml": `name: cal-exec-python
description: "the gate's calibration (cmd/calibrate-gate): a CPU-bound command per iteration"
subject: {kind: exec, command: ["${` + pythonEnv + `}", -S, cal_cpu.py]}
`,
				"benches/cal_cpu.py": calSquares + "\n\nsquares()\n",
			},
			primary:  "latency_ms",
			base:     map[string]string{"CAL_N": "1000000"},
			slow:     fixed(map[string]string{"CAL_N": "1100000"}),
			injected: "1.1× the squares (the interpreter's start-up stays)",
		},
		{
			name:     "pyfunc",
			scenario: "a Python function in the worker: summing 50,000 squares a call",
			files: map[string]string{
				"benches/cal_pyfunc.py": calSquares + "\n\ndef run_squares():\n    squares()\n",
			},
			primary:  "latency_ms",
			base:     map[string]string{"CAL_N": "50000"},
			slow:     fixed(map[string]string{"CAL_N": "55000"}),
			injected: "1.1× the squares",
		},
		pytestKind(),
		{
			name:     "gofunc",
			scenario: "SHA-256 of 1 MiB, as many calls an iteration as last 20 ms (`iteration_time`)",
			// The registered function is its own benchmark, calibrate/sha256: no definition.
			files:    map[string]string{},
			primary:  "latency_ms",
			base:     map[string]string{shaBytesEnv: strconv.Itoa(1 << 20)},
			slow:     fixed(map[string]string{shaBytesEnv: strconv.Itoa(11 << 20 / 10)}),
			injected: "1.1× the bytes hashed",
		},
		{
			name:     "mock",
			scenario: "mock model at its defaults (`latency_ms` 10, jitter 0.05)",
			files: map[string]string{"benches/cal.yaml": `name: cal-mock
description: "the gate's calibration (cmd/calibrate-gate): the simulated model"
subject: {kind: mock, latency_ms: "${CAL_MOCK_MS}"}
`},
			flags:   []string{"--enable-mock"},
			primary: "latency_ms",
			// As for exec, 10% of the measured latency is added to the wait, which is the
			// measured latency less the harness's overhead (the mock's waits are precise since
			// internal/base/precise; on the runtime's timer alone they ended on a 1 ms grid, and
			// 10 -> 11 ms measured +6%).
			base: map[string]string{"CAL_MOCK_MS": "10"},
			slow: func(m float64) map[string]string {
				return map[string]string{"CAL_MOCK_MS": strconv.FormatFloat(10+0.1*m, 'f', 3, 64)}
			},
			injected: "`latency_ms` 10 + 10% of the measured latency",
		},
		{
			name:     "worker",
			scenario: "torch MLP (64-128-10, batch 8) ×200 in the Python worker",
			files:    map[string]string{"benches/cal_torch.py": calTorch},
			primary:  "latency_ms",
			base:     map[string]string{"CAL_REPEAT": "200"},
			slow:     fixed(map[string]string{"CAL_REPEAT": "220"}),
			injected: "1.1× the forward passes",
			pairs:    true,
		},
		{
			name:     "openai",
			scenario: "mockserver, TTFT 10 ms, ITL 1 ms, 8 tokens",
			files:    map[string]string{"benches/cal.yaml": calOpenAI},
			primary:  "ttft_ms",
			// Whole milliseconds, as for the mock: the server's TTFT 10 -> 11 ms; its
			// inter-token gap stays 1 ms (1.1 would end on the same grid).
			base:     map[string]string{"CAL_TTFT_MS": "10"},
			slow:     fixed(map[string]string{"CAL_TTFT_MS": "11"}),
			injected: "the server's TTFT 10 → 11 ms",
		},
	}
}

// pytestKind is a pytest test's benchmark call through the worker's pytest adapter, as `pytest
// --inferbench-baseline-ref` runs it.
func pytestKind() kind {
	return kind{
		name:     "pytest",
		scenario: "a pytest test's benchmark call (the worker's pytest adapter, as `pytest --inferbench-baseline-ref` runs it): summing 50,000 squares a call",
		files: map[string]string{
			"benches/test_cal.py": calSquares + "\n\n\ndef test_squares(benchmark):\n    assert benchmark(squares) >= 0\n",
			"benches/cal.yaml": `name: cal-pytest
description: "the gate's calibration (cmd/calibrate-gate): a pytest test's benchmark call"
subject: {kind: worker, adapter: pytest}
params: {test: "test_cal.py::test_squares"}
`,
		},
		primary:  "latency_ms",
		base:     map[string]string{"CAL_N": "50000"},
		slow:     fixed(map[string]string{"CAL_N": "55000"}),
		injected: "1.1× the squares",
	}
}

// countFlags are the run flags of instruction mode's calibration: counts are the same from
// iteration to iteration, so five measured iterations do (valgrind runs some 50 times slower).
var countFlags = []string{"--measure", "instructions", "--iterations", "5", "--warmup", "1"}

// countedKinds are the kinds of -measure instructions: each counted under callgrind, slowed by
// 1% of its work, every pair of a few runs compared (a run costs seconds under valgrind).
func countedKinds() []kind {
	return []kind{
		{
			name:     "exec",
			scenario: "a command: `sh -c` counting to 2,000 in a shell loop (the whole process counted)",
			files: map[string]string{"benches/cal.yaml": `name: cal-exec
description: "the gate's calibration (cmd/calibrate-gate): a command per iteration, counted"
subject: {kind: exec, command: [sh, -c, 'i=0; while [ $i -lt ${CAL_N} ]; do i=$((i+1)); done']}
`},
			flags:    countFlags,
			primary:  "instructions",
			base:     map[string]string{"CAL_N": "2000"},
			slow:     fixed(map[string]string{"CAL_N": "2020"}),
			injected: "1.01× the loop",
			pairs:    true,
		},
		{
			name:     "gofunc",
			scenario: "SHA-256 of 1 MiB, one call an iteration, counted in a copy of the binary",
			files:    map[string]string{},
			flags:    countFlags,
			primary:  "instructions",
			base:     map[string]string{shaBytesEnv: strconv.Itoa(1 << 20)},
			slow:     fixed(map[string]string{shaBytesEnv: strconv.Itoa(101 << 20 / 100)}),
			injected: "1.01× the bytes hashed",
			pairs:    true,
		},
		{
			name:     "pyfunc",
			scenario: "a Python function in the worker: summing 50,000 squares a call, counted around the call",
			files:    timedKind("pyfunc").files,
			flags:    countFlags,
			primary:  "instructions",
			base:     map[string]string{"CAL_N": "50000"},
			slow:     fixed(map[string]string{"CAL_N": "50500"}),
			injected: "1.01× the squares",
			pairs:    true,
		},
		{
			name:     "worker",
			scenario: "torch MLP (64-128-10, batch 8) ×200 in the Python worker, counted around the call",
			files:    timedKind("worker").files,
			flags:    countFlags,
			primary:  "instructions",
			base:     map[string]string{"CAL_REPEAT": "200"},
			slow:     fixed(map[string]string{"CAL_REPEAT": "202"}),
			injected: "1.01× the forward passes",
			pairs:    true,
		},
	}
}

// timedKind returns the kind of timed calibration named name.
func timedKind(name string) kind {
	for _, k := range kinds() {
		if k.name == name {
			return k
		}
	}
	panic("calibrate-gate: no kind " + name)
}

// pick returns the kinds named in names (all when empty), of instruction mode's calibration when
// measure is "instructions".
func pick(names []string, measure string) ([]kind, error) {
	all := kinds()
	if measure == "instructions" {
		all = countedKinds()
	}
	if len(names) == 0 {
		return all, nil
	}
	var out []kind
	for _, n := range names {
		found := false
		for _, k := range all {
			if k.name == n {
				out = append(out, k)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("-kinds: unknown kind %q (exec, exec-python, pyfunc, pytest, gofunc, mock, worker, openai; with -measure instructions: exec, gofunc, pyfunc, worker)", n)
		}
	}
	return out, nil
}

// fixed is the slow environment of a kind whose slowdown does not depend on what was measured.
func fixed(env map[string]string) func(float64) map[string]string {
	return func(float64) map[string]string { return env }
}
