"""The pytest plugin's options: their defaults, the table of --inferbench-* options with
pytest-benchmark's second names, and the checks made before the session runs."""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import pytest

from inferbench import _baseline_ref, _timing
from inferbench._fixture import Options, Record
from inferbench._table import SORTS, group_key

DEFAULT_OUTPUT_DIR = "benchmark_results"
# The gate the plugin asks for unless told otherwise: the median per-call time, 5% worse. A
# comparison fails on a gated metric only when the change is also significant.
DEFAULT_GATE = "latency_ms"
DEFAULT_THRESHOLD = "latency_ms=5"
# Instruction mode's: compare's own for counts is 0.5%, but a Python function's count moves with
# the interpreter's allocator state between two pytest sessions (−0.44% for an unchanged loop
# here), so the plugin's is 2%.
COUNT_THRESHOLD = "instructions=2"
# Samples kept per test. With a median gate, 99: compare tests tail percentiles from 100 samples
# (p95) and 500 (p99), and a tail of per-round times moves with the machine's load, so a median
# gate keeps none; each sample is then the median of a block of rounds. With a tail gate, rounds
# themselves, enough for a p99.
MEDIAN_SAMPLES = 99
TAIL_SAMPLES = 2000
THRESHOLDS_FILE = "benchmark_thresholds.json"


# Options: the inferbench name, pytest-benchmark's name when its meaning is the same (registered
# only when pytest-benchmark is not active, whose own options those are; when it is, its values
# are read too), and the rest of addoption's arguments.
OPTIONS: list[tuple[str, str | None, dict[str, Any]]] = [
    ("--inferbench-save", None, dict(nargs="?", const="pytest", default=None, metavar="NAME",
     help="write the session's benchmarks as an inferbench run (run.json) under --inferbench-output-dir, its id ending in NAME (default pytest); stored in the history store when --inferbench-store is given. A session that saved nothing fails")),
    ("--inferbench-compare", None, dict(default=None, metavar="BASELINE",
     help="compare the session's benchmarks with BASELINE (a run.json, run folder, run id, latest or baseline:NAME) through inferbench compare --between-sessions; exit 3 on a regression. A timed change between two sessions is judged against the machine's run-to-run noise learnt from 10 sessions in --inferbench-store, and is unknown (not failing) until then")),
    ("--inferbench-strict", None, dict(action="store_true", default=False,
     help="with --inferbench-compare: also fail (exit 3) on what the comparison cannot decide: a gated change beyond its threshold that two sessions cannot tell from the machine's run-to-run noise (unknown until the store holds 10 sessions of the benchmark), or a single value a side (inferbench compare --strict)")),
    ("--inferbench-baseline-ref", None, dict(default=None, metavar="REF",
     help="measure each benchmarked test at REF (a branch, tag or commit; a git worktree) and in the working tree, in two interleaved worker processes, through inferbench run --baseline-ref; exit 3 on a regression. The benchmarked tests run there, not in this session; the run folder is written under --inferbench-output-dir")),
    ("--inferbench-output-dir", None, dict(default=DEFAULT_OUTPUT_DIR, metavar="DIR",
     help="folder that receives the run folder (default benchmark_results, as inferbench run)")),
    ("--inferbench-store", None, dict(default=None, metavar="STORE",
     help="history store to record saved runs in and to find BASELINE in (a SQLite file, sqlite:PATH or postgres://...)")),
    ("--inferbench-threshold", None, dict(action="append", default=[], metavar="SPEC",
     help=f"regression threshold, [BENCHMARK:]METRIC_OR_KIND=PERCENT (repeatable), as inferbench compare --threshold; default {DEFAULT_THRESHOLD} unless this or {THRESHOLDS_FILE} sets thresholds")),
    ("--inferbench-gate", None, dict(action="append", default=[], metavar="METRIC",
     help="also gate on METRIC (repeatable), as inferbench compare --gate: latency_ms.p95 or latency_ms.p99 (the tails: the rounds themselves are kept, up to 2000), peak_rss_mb, cpu_s. Default: the median per-call time only")),
    ("--inferbench-secret-param", None, dict(action="append", default=[], metavar="NAME",
     help="a test parameter whose values are secrets (repeatable): masked whole in the saved run. Other parameters are saved as pytest gives them, masked only where a value holds a secret of the environment")),
    ("--inferbench-measure", None, dict(default="time", choices=["time", "instructions"],
     help="time: time each round (default); instructions: count each round's instructions under valgrind's callgrind (the session runs again under it: counts do not move with the machine's load; the gate is then the instructions per call)")),
    ("--inferbench-json", "--benchmark-json", dict(default=None, metavar="PATH",
     help="also write the session as pytest-benchmark JSON to PATH")),
    ("--inferbench-min-rounds", "--benchmark-min-rounds", dict(type=int, default=5, metavar="N", help="at least this many measured rounds (default 5)")),
    ("--inferbench-max-time", "--benchmark-max-time", dict(type=float, default=1.0, metavar="S", help="measure each benchmark for about this many seconds (default 1.0)")),
    ("--inferbench-min-time", "--benchmark-min-time", dict(type=float, default=5e-6, metavar="S",
     help="calibrate iterations so that a round lasts at least this long, and at least 100 grains of the timer (default 5e-06)")),
    ("--inferbench-warmup-time", None, dict(type=float, default=0.05, metavar="S", help="call the function for this long (at least two passes) before calibrating (default 0.05)")),
    ("--inferbench-warmup", None, dict(type=int, default=1, metavar="N", help="calibrated rounds run after calibration and not recorded (default 1)")),
    ("--inferbench-iterations", None, dict(type=int, default=None, metavar="N", help="iterations per round instead of calibrating")),
    ("--inferbench-rounds", None, dict(type=int, default=None, metavar="N", help="measured rounds instead of --inferbench-max-time")),
    ("--inferbench-max-samples", None, dict(type=int, default=None, metavar="N",
     help=f"samples kept per test in the run (default {MEDIAN_SAMPLES}, each the median of a block of rounds; {TAIL_SAMPLES} rounds when a tail is gated; 0 keeps every round)")),
    ("--inferbench-timer", "--benchmark-timer", dict(default="time.perf_counter", metavar="FUNC", help="timer function, module.function returning seconds (default time.perf_counter; e.g. time.process_time)")),
    ("--inferbench-disable-gc", "--benchmark-disable-gc", dict(action="store_true", default=False, help="disable the garbage collector while rounds run")),
    ("--inferbench-disable", "--benchmark-disable", dict(action="store_true", default=False, help="call each benchmarked function once, untimed: the tests run as plain tests")),
    ("--inferbench-skip", "--benchmark-skip", dict(action="store_true", default=False, help="skip the tests that use the benchmark fixture")),
    ("--inferbench-only", "--benchmark-only", dict(action="store_true", default=False, help="skip the tests that do not use the benchmark fixture (wins over --inferbench-skip)")),
    ("--inferbench-group-by", "--benchmark-group-by", dict(default="group", metavar="KEYS",
     help="group the table by group, name, fullname, func, fullfunc, param or param:NAME, comma-separated (default group)")),
    ("--inferbench-sort", "--benchmark-sort", dict(default="min", metavar="COL", help="sort each group by min, max, mean, median, stddev, iqr, rounds, name or fullname (default min)")),
    ("--inferbench-histogram", "--benchmark-histogram", dict(nargs="?", const="benchmark_histogram", default=None, metavar="PREFIX",
     help="write a box plot of each group's per-call times to PREFIX-GROUP.svg (default prefix benchmark_histogram)")),
    ("--inferbench-cprofile", "--benchmark-cprofile", dict(nargs="?", const="cumtime", default=None, metavar="SORT",
     help="profile one more calibrated round of each benchmark with cProfile and print the top functions of the slowest tests, sorted by SORT (default cumtime; tottime, ncalls, ...)")),
    ("--inferbench-cprofile-top", "--benchmark-cprofile-top", dict(type=int, default=10, metavar="N", help="functions printed per profile (default 10)")),
]

# Options whose pytest-benchmark value is read as ours when pytest-benchmark is active.
SAME_MEANING = ["disable", "skip", "only", "disable_gc"]


def benchmark_plugin_loaded(pm: pytest.PytestPluginManager) -> bool:
    """benchmark_plugin_loaded: pytest-benchmark's plugin is (or will be) loaded in this session."""
    if pm.has_plugin("benchmark") or pm.has_plugin("pytest_benchmark.plugin"):
        return True
    if pm.is_blocked("benchmark") or os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    return importlib.util.find_spec("pytest_benchmark") is not None


def check_options(config: pytest.Config) -> None:
    """check_options refuses option values that would only fail at the end of the session."""
    if config.getoption("inferbench_baseline_ref"):
        _baseline_ref.check(config, {name.removeprefix("--").replace("-", "_"): kw.get("default") for name, _, kw in OPTIONS},
                            compat_registered=not benchmark_plugin_loaded(config.pluginmanager))
    probe = Record(name="t[a]", fullname="f.py::t[a]", group=None, params={}, options=Options())
    try:
        group_key(probe, config.getoption("inferbench_group_by"))
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    if (s := config.getoption("inferbench_sort")) not in SORTS:
        raise pytest.UsageError(f"--inferbench-sort {s}: want one of {', '.join(SORTS)}")
    try:
        _timing.load_timer(config.getoption("inferbench_timer"))
    except ValueError as e:
        raise pytest.UsageError(f"--inferbench-timer: {e}") from None
    for name in ("min_rounds", "warmup"):
        if (v := config.getoption("inferbench_" + name)) < 0:
            raise pytest.UsageError(f"--inferbench-{name.replace('_', '-')} {v}: want 0 or more")
    for name in ("iterations", "rounds"):
        if (v := config.getoption("inferbench_" + name)) is not None and v < 1:
            raise pytest.UsageError(f"--inferbench-{name} {v}: want 1 or more")
    for name in ("max_time", "min_time", "warmup_time"):
        if not (v := config.getoption("inferbench_" + name)) >= 0:
            raise pytest.UsageError(f"--inferbench-{name.replace('_', '-')} {v}: want seconds, 0 or more")
