"""The pytest plugin (entry point pytest11 "inferbench"): time functions, save the session as an
inferbench run, gate it against a baseline.

    def test_resize(inferbench_benchmark):               # or `benchmark` without pytest-benchmark
        out = inferbench_benchmark(resize, image, 224)   # pytest-benchmark's call style
        assert out.shape == (224, 224)

    pytest --inferbench-save main                        # benchmark_results/<id>/run.json
    pytest --inferbench-compare benchmark_results/latest # exit 3 on a regression

Each benchmark is warmed up, then calibrated (iterations per round so that a round lasts
--inferbench-min-time and at least 100 grains of its timer), then timed over rounds for
--inferbench-max-time; a round's time divided by its iterations is one per-call time (_timing.py).
The session is written as pytest-benchmark JSON holding each test's statistics and its samples
(at most --inferbench-max-samples: block medians of the rounds for the median gate), which the
binary imports (`inferbench import`) and turns into run.json; the plugin adds each benchmark's CPU
and peak memory, the gate, and the environment (`inferbench sysinfo`). Comparison is one
`inferbench compare` call: its table and its exit code (3 on a regression). The gate is the
median per-call time (latency_ms) with a 5% threshold unless the user names others.
"""

from __future__ import annotations

import contextlib
import cProfile
import datetime as _dt
import importlib.util
import io
import json
import math
import os
import platform
import pstats
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import pytest

from inferbench import _binary, _counted, _timing
from inferbench._table import SORTS, group_key, histogram_svg, table
from inferbench.errors import EXIT_REGRESSION, InferbenchError, error_for, message_of
from inferbench.results import Comparison, parse_comparison

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

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


class InferbenchWarning(pytest.PytestWarning):
    """InferbenchWarning: the plugin changed or ignored something the user asked for."""


# Options: the inferbench name, pytest-benchmark's name when its meaning is the same (registered
# only when pytest-benchmark is not active, whose own options those are; when it is, its values
# are read too), and the rest of addoption's arguments.
_OPTIONS: list[tuple[str, str | None, dict[str, Any]]] = [
    ("--inferbench-save", None, dict(nargs="?", const="pytest", default=None, metavar="NAME",
     help="write the session's benchmarks as an inferbench run (run.json) under --inferbench-output-dir, its id ending in NAME (default pytest); stored in the history store when --inferbench-store is given. A session that saved nothing fails")),
    ("--inferbench-compare", None, dict(default=None, metavar="BASELINE",
     help="compare the session's benchmarks with BASELINE (a run.json, run folder, run id, latest or baseline:NAME) through inferbench compare; exit 3 on a regression")),
    ("--inferbench-output-dir", None, dict(default=DEFAULT_OUTPUT_DIR, metavar="DIR",
     help="folder that receives the run folder (default benchmark_results, as inferbench run)")),
    ("--inferbench-store", None, dict(default=None, metavar="STORE",
     help="history store to record saved runs in and to find BASELINE in (a SQLite file, sqlite:PATH or postgres://...)")),
    ("--inferbench-threshold", None, dict(action="append", default=[], metavar="SPEC",
     help=f"regression threshold, [BENCHMARK:]METRIC_OR_KIND=PERCENT (repeatable), as inferbench compare --threshold; default {DEFAULT_THRESHOLD} unless this or {THRESHOLDS_FILE} sets thresholds")),
    ("--inferbench-gate", None, dict(action="append", default=[], metavar="METRIC",
     help="also gate on METRIC (repeatable), as inferbench compare --gate: latency_ms.p95 or latency_ms.p99 (the tails: the rounds themselves are kept, up to 2000), peak_rss_mb, cpu_s. Default: the median per-call time only")),
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
_SAME_MEANING = ["disable", "skip", "only", "disable_gc"]


def _pytest_benchmark_active(pm: pytest.PytestPluginManager) -> bool:
    """_pytest_benchmark_active: pytest-benchmark's plugin is (or will be) loaded in this session."""
    if pm.has_plugin("benchmark") or pm.has_plugin("pytest_benchmark.plugin"):
        return True
    if pm.is_blocked("benchmark") or os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    return importlib.util.find_spec("pytest_benchmark") is not None


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    g = parser.getgroup("inferbench", "inferbench: benchmarks saved as inferbench runs")
    aliases = not _pytest_benchmark_active(pluginmanager)
    for name, alias, kw in _OPTIONS:
        names = [name, alias] if alias and aliases else [name]
        g.addoption(*names, dest=name.removeprefix("--").replace("-", "_"), **kw)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "inferbench(group=None, min_rounds=None, max_time=None, min_time=None, warmup=None, warmup_time=None, iterations=None, rounds=None, timer=None, disable_gc=None, max_samples=None): options of the benchmark fixture for this test")
    _check_options(config)
    if config.getoption("inferbench_measure") == _counted.MODE and not os.environ.get(_counted.ENV) and not hasattr(config, "workerinput"):
        _run_under_callgrind(config)
    pb = _pytest_benchmark_active(config.pluginmanager)
    if not pb:
        config.addinivalue_line("markers", "benchmark(group=None, min_rounds=None, max_time=None, min_time=None, timer=None, disable_gc=None): pytest-benchmark's marker, read by inferbench where the meaning is the same")
        config.pluginmanager.register(_Alias(), "inferbench-benchmark-alias")
    sess = Session(config, pytest_benchmark=pb)
    config.stash[_SESSION] = sess
    config.pluginmanager.register(sess, "inferbench-session")
    if sess.xdist and not hasattr(config, "workerinput"):
        config.issue_config_time_warning(InferbenchWarning(
            "inferbench: benchmarks disabled under pytest-xdist (-n): parallel workers share the CPUs and their "
            "timings would not be gathered; each benchmarked function runs once, untimed. Run benchmarks with -n 0 "
            "(or -p no:xdist)."), stacklevel=2)


def _run_under_callgrind(config: pytest.Config) -> None:
    """_run_under_callgrind runs this pytest session again under callgrind (instruction mode),
    removes callgrind's files after it and exits with its exit code: it does not return."""
    if sys.platform == "win32":
        raise pytest.UsageError("--inferbench-measure instructions: valgrind does not run on Windows; measure time (drop the option)")
    try:
        valgrind, version = _counted.find_valgrind()
    except _counted.Unavailable as e:
        raise pytest.UsageError(str(e)) from None
    out = Path(tempfile.mkdtemp(prefix="inferbench-callgrind-"))
    capman = config.pluginmanager.getplugin("capturemanager")
    if capman is not None:
        capman.suspend_global_capture(in_=True)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        # A child rather than exec: callgrind writes its last file when the session exits, and
        # the folder is removed only after that.
        rc = subprocess.run(_counted.argv(valgrind, out), env=_counted.environ(out, version), check=False).returncode
    except KeyboardInterrupt:
        rc = 130
    finally:
        shutil.rmtree(out, ignore_errors=True)
    os._exit(rc if rc >= 0 else 128 - rc)


def _check_options(config: pytest.Config) -> None:
    """_check_options refuses option values that would only fail at the end of the session."""
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


@dataclass
class Options:
    """Options of one benchmark's timing, from the command line and the test's marker."""

    min_rounds: int = 5
    max_time: float = 1.0
    min_time: float = 5e-6
    warmup: int = 1
    warmup_time: float = 0.05
    iterations: int | None = None
    rounds: int | None = None
    group: str | None = None
    timer: Any = "time.perf_counter"
    disable_gc: bool = False
    max_samples: int | None = None


# pytest-benchmark's marker arguments: the same meaning (read), and those without an equivalent
# (ignored, with a note once per session).
_PB_MARKER_SAME = {"group", "min_rounds", "max_time", "min_time", "timer", "disable_gc"}
_PB_MARKER_NOTE = {
    "warmup": "the function is always warmed up (--inferbench-warmup-time) before calibration",
    "warmup_iterations": "the warm-up is by time: --inferbench-warmup-time",
    "calibration_precision": "calibration makes a round last --inferbench-min-time and 100 grains of the timer",
}


@dataclass
class Record:
    """Record is one timed benchmark: its rounds (seconds per call) and its window's resources."""

    name: str
    fullname: str
    group: str | None
    params: dict[str, Any] | None
    options: Options
    data: list[float] = field(default_factory=list)
    iterations: int = 1
    warmup_rounds: int = 0
    started: float = 0.0  # wall-clock start of the measured rounds (time.time)
    duration_s: float = 0.0
    cpu_s: float = 0.0
    peak_rss_mb: float | None = None
    extra_info: dict[str, Any] = field(default_factory=dict)
    failed: str = ""  # the test's failure, when it failed
    timer: str = "perf_counter"
    profile: str = ""  # cProfile's top functions, when asked
    measure: str = "time"  # or "instructions": data is then instructions per call
    est_cycles: list[float] = field(default_factory=list)  # instruction mode: estimated cycles per call, per round


class _Window:
    """_Window measures the process's CPU time and peak resident memory over the measured rounds.

    The peak is the kernel's high-water mark (VmHWM) reset when the window opens
    (/proc/self/clear_refs, Linux), as inferbench's process sampler does; elsewhere it is the
    process's peak so far (getrusage), an upper bound.
    """

    def __enter__(self) -> _Window:
        self.reset = _reset_hwm()
        self.cpu0 = time.process_time()
        self.wall0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall0
        self.cpu = time.process_time() - self.cpu0
        self.peak_mb = _peak_rss_mb(self.reset)


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_rss_mb(reset: bool) -> float | None:
    if reset:
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024  # kB
        except OSError:
            pass
    if resource is None:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


class BenchmarkFixture:
    """BenchmarkFixture times a function, in pytest-benchmark's ``benchmark`` call style.

    ``fixture(fn, *args, **kwargs)`` warms fn up, calibrates iterations per round, runs the rounds
    and returns fn's result; ``fixture.pedantic(fn, args, kwargs, setup, teardown, rounds,
    warmup_rounds, iterations)`` runs exactly what it is told. One call per test. When benchmarks
    are disabled (--inferbench-disable, pytest-xdist) each calls fn once, untimed.
    """

    def __init__(self, record: Record, store: Callable[[Record], None], disabled: bool = False, profile: str | None = None, top: int = 10,
                 counter: _counted.Counter | None = None) -> None:
        self._counter = counter
        self._record = record
        self._store = store
        self._used = False
        self._disabled = disabled
        self._profile = profile
        self._top = top
        self.extra_info = record.extra_info

    @property
    def name(self) -> str:
        return self._record.name

    @property
    def group(self) -> str | None:
        return self._record.group

    @group.setter
    def group(self, value: str | None) -> None:
        self._record.group = value

    @property
    def disabled(self) -> bool:
        return self._disabled

    @property
    def stats(self) -> dict[str, float] | None:
        """stats is the summary of the rounds so far (seconds), None before the call."""
        return _timing.stats(self._record.data, self._record.iterations) if self._record.data else None

    def _begin(self) -> None:
        if self._used:
            raise RuntimeError(f"{self._record.fullname}: the benchmark fixture can be called once per test (use parametrize for several)")
        self._used = True
        # Kept from the call on: a function that raises inside the fixture leaves a record
        # without rounds, which the saved run holds as a failed scenario with the error.
        self._store(self._record)

    def _timer(self) -> Callable[[], float]:
        t = self._record.options.timer
        if callable(t):
            self._record.timer = getattr(t, "__name__", "timer")
            return t  # type: ignore[no-any-return]
        try:
            fn = _timing.load_timer(str(t))
        except ValueError as e:
            raise pytest.UsageError(f"{self._record.fullname}: {e}") from None
        self._record.timer = str(t).rpartition(".")[2]
        return fn

    def __call__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        self._begin()
        if self._disabled:
            return fn(*args, **kwargs)
        o = self._record.options
        if self._counter is not None:
            return self._count(o.iterations, o.rounds, fn, args, kwargs)
        timer = self._timer()

        def timed(n: int) -> float:
            r = range(n)
            t0 = timer()
            for _ in r:
                fn(*args, **kwargs)
            return timer() - t0

        with _untraced(), _timing.gc_off(o.disable_gc):
            if o.iterations:
                loops = o.iterations
                duration = timed(loops)
            else:
                per_call = _timing.warm_up(timed, o.warmup_time)
                loops, duration = _timing.calibrate(timed, per_call, _timing.min_round(o.min_time, timer))
            for _ in range(o.warmup):
                timed(loops)
            rounds = o.rounds or max(o.min_rounds, math.ceil(o.max_time / max(duration, 1e-9)))
            # The rounds stop once they have lasted max_time (and min_rounds ran): on a loaded
            # machine they last longer than calibration said, and the session would too.
            deadline = math.inf if o.rounds else o.max_time
            data: list[float] = []
            spent = 0.0
            with _Window() as w:
                started = time.time()
                for i in range(rounds):
                    t = timed(loops)
                    data.append(t / loops)
                    spent += t
                    if spent >= deadline and i + 1 >= o.min_rounds:
                        break
            if self._profile:
                self._record.profile = _profile(lambda: timed(loops), self._profile, self._top)
        self._finish(data, loops, o.warmup, started, w)
        return fn(*args, **kwargs)

    def _count(self, iterations: int | None, rounds: int | None, fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
        """_count is instruction mode: a warm-up, iterations per round from one call's count
        (unless given), then rounds each counted by callgrind."""
        for _ in range(3):
            fn(*args, **kwargs)  # warm-up: nothing is counted outside the rounds
        counter = self._counter
        assert counter is not None
        n = iterations or _counted.iterations_for(counter, lambda: fn(*args, **kwargs))

        def calls() -> None:
            for _ in range(n):
                fn(*args, **kwargs)

        data, est = [], []
        with _untraced(), _timing.gc_off(self._record.options.disable_gc), _Window() as w:
            started = time.time()
            for _ in range(rounds or _counted.ROUNDS):
                ev = counter.count(calls)
                data.append(ev.get("Ir", 0) / n)
                est.append(_counted.est_cycles(ev) / n)
        self._record.measure, self._record.est_cycles = _counted.MODE, est
        self._finish(data, n, 3, started, w)
        return fn(*args, **kwargs)

    def pedantic(
        self,
        target: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        setup: Callable[[], Any] | None = None,
        teardown: Callable[..., Any] | None = None,
        rounds: int = 1,
        warmup_rounds: int = 0,
        iterations: int = 1,
    ) -> Any:
        """pedantic runs target for exactly rounds rounds of iterations calls, after
        warmup_rounds; setup (called before each round, may return (args, kwargs)) and teardown
        (after each round, with the same arguments) are not timed, as in pytest-benchmark."""
        self._begin()
        if iterations < 1 or rounds < 1 or warmup_rounds < 0:
            raise ValueError(f"{self._record.fullname}: pedantic wants rounds >= 1, iterations >= 1, warmup_rounds >= 0")
        if setup is not None and iterations > 1:
            raise ValueError(f"{self._record.fullname}: pedantic with setup takes iterations=1 (setup runs once per round)")
        kwargs = kwargs or {}
        result: Any = None
        timer = self._timer() if not self._disabled else time.perf_counter

        def one() -> float:
            nonlocal result
            a, k = args, kwargs
            if setup is not None:
                got = setup()
                if got is not None:
                    a, k = got
            if iterations == 1:  # no loop around a single call: its cost would be measured
                t0 = timer()
                result = target(*a, **k)
                t = timer() - t0
            else:
                r = range(iterations)
                t0 = timer()
                for _ in r:
                    result = target(*a, **k)
                t = timer() - t0
            if teardown is not None:
                teardown(*a, **k)
            return t

        if self._disabled:
            one()
            return result
        if self._counter is not None:
            counter = self._counter
            data, est = [], []
            with _untraced(), _timing.gc_off(self._record.options.disable_gc):
                for _ in range(warmup_rounds):
                    one()
                with _Window() as w:
                    started = time.time()
                    # At most ROUNDS counted: a count barely moves from round to round, and each
                    # round costs callgrind a dump of the whole program's costs.
                    for _ in range(min(rounds, _counted.ROUNDS)):
                        a, k = args, kwargs
                        if setup is not None and (got := setup()) is not None:
                            a, k = got

                        def calls(a: Any = a, k: Any = k) -> None:
                            nonlocal result
                            for _ in range(iterations):
                                result = target(*a, **k)

                        ev = counter.count(calls)
                        if teardown is not None:
                            teardown(*a, **k)
                        data.append(ev.get("Ir", 0) / iterations)
                        est.append(_counted.est_cycles(ev) / iterations)
            self._record.measure, self._record.est_cycles = _counted.MODE, est
            self._finish(data, iterations, warmup_rounds, started, w)
            return result
        with _untraced(), _timing.gc_off(self._record.options.disable_gc):
            for _ in range(warmup_rounds):
                one()
            data: list[float] = []
            with _Window() as w:
                started = time.time()
                for _ in range(rounds):
                    data.append(one() / iterations)
            if self._profile:
                self._record.profile = _profile(one, self._profile, self._top)
        self._finish(data, iterations, warmup_rounds, started, w)
        return result

    def _finish(self, data: list[float], iterations: int, warmup: int, started: float, w: _Window) -> None:
        r = self._record
        r.data, r.iterations, r.warmup_rounds, r.started = data, iterations, warmup, started
        r.duration_s, r.cpu_s, r.peak_rss_mb = w.wall, w.cpu, w.peak_mb
        self._store(r)


def _profile(round_: Callable[[], Any], sort: str, top: int) -> str:
    """_profile runs one more round under cProfile and returns its top functions as pstats prints them."""
    prof = cProfile.Profile()
    prof.enable()
    try:
        round_()
    finally:
        prof.disable()
    out = io.StringIO()
    try:
        pstats.Stats(prof, stream=out).sort_stats(sort).print_stats(top)
    except KeyError:
        raise pytest.UsageError(f"--inferbench-cprofile {sort}: unknown sort key (want cumtime, tottime, ncalls, ...)") from None
    lines = out.getvalue().splitlines()
    # From the table's header on: the lines before it say where the profile came from.
    start = next((i for i, ln in enumerate(lines) if "ncalls" in ln), 0)
    return "\n".join(ln for ln in lines[start:] if ln.strip())


@contextlib.contextmanager
def _untraced() -> Iterator[None]:
    """_untraced turns off a tracer (coverage, a debugger) and a profiler while rounds are timed,
    as pytest-benchmark does."""
    tracer, profiler = sys.gettrace(), sys.getprofile()
    sys.settrace(None)
    sys.setprofile(None)
    try:
        yield
    finally:
        sys.settrace(tracer)
        sys.setprofile(profiler)


_SESSION = pytest.StashKey["Session"]()
_FIXTURES = ("inferbench_benchmark", "benchmark")


class Session:
    """Session collects the benchmarks of a pytest session and writes, stores and compares them."""

    def __init__(self, config: pytest.Config, pytest_benchmark: bool = False) -> None:
        self.config = config
        self.pytest_benchmark = pytest_benchmark
        self.records: dict[str, Record] = {}
        self.started = _dt.datetime.now(_dt.timezone.utc)
        self.lines: list[str] = []  # what the terminal summary prints
        self.run_dir: Path | None = None
        self.comparison: Comparison | None = None
        self.notes: set[str] = set()
        counted = os.environ.get(_counted.ENV)
        self.counter = _counted.Counter(Path(counted)) if counted and config.getoption("inferbench_measure") == _counted.MODE else None
        self.identity: dict[str, str] = {}
        self.xdist = hasattr(config, "workerinput") or bool(
            config.pluginmanager.hasplugin("xdist")
            and (config.getoption("numprocesses", None) or config.getoption("dist", "no") not in ("no", None)))

    def opt(self, name: str) -> Any:
        """opt is the value of option inferbench_NAME, or of pytest-benchmark's benchmark_NAME of
        the same meaning when pytest-benchmark is active and it was given."""
        v = self.config.getoption("inferbench_" + name)
        if not v and name in _SAME_MEANING and self.pytest_benchmark:
            v = self.config.getoption("benchmark_" + name, None) or v
        return v

    @property
    def disabled(self) -> bool:
        return bool(self.opt("disable") or self.xdist)

    @property
    def tails(self) -> bool:
        return any(".p" in g for g in self.config.getoption("inferbench_gate"))

    def options_for(self, item: pytest.Item) -> Options:
        o = Options(min_rounds=self.opt("min_rounds"), max_time=self.opt("max_time"), min_time=self.opt("min_time"),
                    warmup=self.opt("warmup"), warmup_time=self.opt("warmup_time"), iterations=self.opt("iterations"),
                    rounds=self.opt("rounds"), timer=self.opt("timer"), disable_gc=bool(self.opt("disable_gc")),
                    max_samples=self.opt("max_samples"))
        known = [f.name for f in fields(Options)]
        # pytest-benchmark's marker first, then inferbench's, which wins where both say something.
        m = item.get_closest_marker("benchmark")
        if m is not None and not self.pytest_benchmark:
            for k, v in m.kwargs.items():
                if k in _PB_MARKER_SAME:
                    setattr(o, k, v)
                else:
                    why = _PB_MARKER_NOTE.get(k, "unknown to inferbench")
                    self.note(f"@pytest.mark.benchmark({k}=...) is ignored: {why}")
        m = item.get_closest_marker("inferbench")
        if m is not None:
            for k, v in m.kwargs.items():
                if k not in known:
                    raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.inferbench({k}=...): unknown option (want {', '.join(known)})")
                setattr(o, k, v)
        return o

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.add(text)
            self.lines.append(f"inferbench: {text}")

    # Hooks of the session (the Session is registered as a plugin).

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        skip, only = self.opt("skip"), self.opt("only")
        theirs = 0
        for item in items:
            names = getattr(item, "fixturenames", ())
            ours = "inferbench_benchmark" in names or ("benchmark" in names and not self.pytest_benchmark)
            if "benchmark" in names and self.pytest_benchmark:
                theirs += 1
            if only and not ours:
                item.add_marker(pytest.mark.skip(reason="not a benchmark (--inferbench-only)"))
            elif skip and not only and ours:
                item.add_marker(pytest.mark.skip(reason="a benchmark (--inferbench-skip)"))
        if theirs and (config.getoption("inferbench_save") or config.getoption("inferbench_compare")):
            warnings.warn(InferbenchWarning(
                f"inferbench: {theirs} test(s) use the `benchmark` fixture, which is pytest-benchmark's here (it is installed): "
                "their results are not in inferbench's run. Use inferbench_benchmark, or run with -p no:benchmark to make "
                "`benchmark` inferbench's."), stacklevel=1)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        r = self.records.get(report.nodeid)
        if r is not None and report.when == "call" and report.failed:
            crash = getattr(report.longrepr, "reprcrash", None)
            r.failed = (getattr(crash, "message", "") or "test failed").splitlines()[0][:500]

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.finish(session)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        recs = [r for r in self.records.values() if r.data]
        if not recs and not self.lines:
            return
        tr = terminalreporter
        tr.write_sep("-", "inferbench")
        if recs:
            tr.write_line(table(recs, self.config.getoption("inferbench_group_by"), self.config.getoption("inferbench_sort")).rstrip())
            if self.counter:
                tr.write_line("inferbench: measured instructions per call under valgrind's callgrind (--inferbench-measure instructions), "
                              "not time: the gate is their median, 2% worse")
        for r in sorted((r for r in recs if r.profile), key=lambda r: -sorted(r.data)[len(r.data) // 2])[:3]:
            tr.write_line(f"\ncProfile of {r.fullname} (one calibrated round of {r.iterations} call(s)):")
            tr.write_line(r.profile)
        for line in self.lines:
            tr.write_line(line)

    # The pytest-benchmark JSON of the session (the binary's import reads it).

    def benchmark_json(self) -> dict[str, Any]:
        benches = []
        for r in self.records.values():
            if not r.data:
                continue
            data = r.data
            if r.measure == _counted.MODE:
                # The import reads seconds and writes milliseconds: counts go in as count / 1000 so
                # that the imported metric's numbers are counts (_enrich renames it instructions).
                data = [x / 1000 for x in r.data]
            st = _timing.stats(data, r.iterations)
            cap = r.options.max_samples
            if cap is None:
                cap = TAIL_SAMPLES if self.tails else MEDIAN_SAMPLES
            st["data"] = _timing.summarize(data, cap, self.tails)
            benches.append({
                "group": r.group, "name": r.name, "fullname": r.fullname, "params": r.params,
                "param": None if not r.params else r.name.partition("[")[2].rstrip("]"),
                "extra_info": r.extra_info,
                "options": {"min_rounds": r.options.min_rounds, "max_time": r.options.max_time, "min_time": r.options.min_time,
                            "timer": r.timer, "disable_gc": r.options.disable_gc, "warmup": r.warmup_rounds},
                "stats": st,
            })
        return {
            "machine_info": {"node": platform.node(), "processor": platform.processor(), "machine": platform.machine(),
                             "python_implementation": platform.python_implementation(), "python_version": platform.python_version(),
                             "system": platform.system(), "release": platform.release()},
            "commit_info": {},
            "benchmarks": benches,
            "datetime": self.started.isoformat(),
            "version": "inferbench-pytest",
        }

    # Writing the run.

    def finish(self, session: pytest.Session) -> None:
        c = self.config
        if hasattr(c, "workerinput"):
            return  # a pytest-xdist worker: benchmarks are disabled there
        save, baseline = c.getoption("inferbench_save"), c.getoption("inferbench_compare")
        doc = self.benchmark_json()
        if p := c.getoption("inferbench_json"):
            Path(p).write_text(json.dumps(doc, indent=2))
        if hist := c.getoption("inferbench_histogram"):
            for path in histogram_svg([r for r in self.records.values() if r.data], c.getoption("inferbench_group_by"), hist):
                self.lines.append(f"inferbench: histogram written to {path}")
        if not save and not baseline:
            return
        if not doc["benchmarks"]:
            raised = [r for r in self.records.values() if r.failed and not r.data]
            why = "benchmarks are disabled under pytest-xdist: run them with -n 0" if self.xdist else (
                "benchmarks are disabled (--inferbench-disable)" if self.disabled else
                f"every benchmark failed: {len(raised)} test(s) raised inside the benchmark fixture, first {raised[0].fullname}: {raised[0].failed}" if raised else
                "no test used the benchmark fixture")
            what = "saved" if save and not baseline else "saved or compared" if save else "compared"
            self.lines.append(f"inferbench: no benchmark ran in this session: nothing {what} ({why}); the session fails")
            if session.exitstatus == 0:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return
        t0 = time.perf_counter()
        _remove_stale_temp()
        try:
            with tempfile.TemporaryDirectory(prefix=f"{_TEMP_PREFIX}{os.getpid()}-") as tmp:
                run_json = self._write_run(doc, save or "pytest", Path(tmp), keep=bool(save))
                try:
                    if baseline:
                        self._compare(session, baseline, run_json)
                finally:
                    if save:
                        # After the comparison: there "latest" is still the run before this one.
                        self._publish(run_json)
        except (InferbenchError, OSError, ValueError) as e:  # the binary's errors end the session as an error
            self.lines.append(f"inferbench: {e}")
            session.exitstatus = pytest.ExitCode.TESTS_FAILED if session.exitstatus == 0 else session.exitstatus
            return
        what = "saved and compared" if save and baseline else "saved" if save else "compared"
        self.lines.append(f"inferbench: {len(doc['benchmarks'])} benchmark(s) {what} in {time.perf_counter() - t0:.2f} s")

    def _run(self, args: list[str]) -> str:
        p = _binary.execute(args, cwd=self.config.invocation_params.dir)
        if p.returncode != 0:
            raise error_for(p.returncode, args, p.stderr)
        return p.stdout

    def _write_run(self, doc: dict[str, Any], name: str, tmp: Path, keep: bool) -> Path:
        """_write_run turns the session into run.json, in a run folder of the output folder when
        keep, else in tmp, and returns its path."""
        rid = f"{self.started.strftime('%Y%m%d_%H%M%S')}-{secrets.token_hex(4)}_{_safe(name)}"
        pb = tmp / "pytest-benchmark.json"
        pb.write_text(json.dumps(doc))
        db = f"sqlite:{tmp / 'import.db'}"
        self._run(["import", str(pb), "--format", "pytest", "--store", db, "--id", rid])
        self._run(["report", rid, "--store", db, "--format", "json", "-o", str(tmp / "imported.json")])
        run = json.loads((tmp / "imported.json").read_text())
        self._enrich(run)
        base = Path(self.config.invocation_params.dir) / self.config.getoption("inferbench_output_dir")
        folder = base / rid if keep else tmp / "run"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "run.json"
        path.write_text(json.dumps(run, indent=1, allow_nan=False))
        if keep:
            if not self.counter:  # counts are not pytest-benchmark's seconds
                (folder / "pytest-benchmark.json").write_text(json.dumps(doc, indent=1))
            self.run_dir = folder
            self.lines.append(f"inferbench: run {rid} written to {path}")
        return path

    def _publish(self, path: Path) -> None:
        """_publish points the output folder's latest at the saved run and records it in the
        store when one is given."""
        rid = path.parent.name
        _link_latest(path.parent.parent, rid)
        if store := self.config.getoption("inferbench_store"):
            self._run(["import", str(path), "--format", "inferbench", "--store", store, "--id", rid])
            self.lines.append(f"inferbench: run {rid} recorded in {store}")

    def _enrich(self, run: dict[str, Any]) -> None:
        """_enrich adds what the pytest-benchmark JSON cannot carry: each window's resources,
        warm-up rounds, the gate, test failures, the environment and the command line."""
        by_name = {r.fullname: r for r in self.records.values()}
        if self.counter:
            self.identity = _counted.identity()
        gate = [DEFAULT_GATE, *(g for g in self.config.getoption("inferbench_gate") if g != DEFAULT_GATE)]
        for s in run["scenarios"]:
            r = by_name.get(s.get("source", ""))
            if r is None:
                continue
            s["iterations"]["warmup"] = r.warmup_rounds
            s["duration_s"] = r.duration_s
            s["started_at"] = _dt.datetime.fromtimestamp(r.started, _dt.timezone.utc).isoformat().replace("+00:00", "Z")
            s["subject"] = "pytest"
            s["gate"] = gate
            m = s["metrics"]
            if r.measure == _counted.MODE:
                ins = m.pop("latency_ms")
                ins.update(unit="count", better="lower")
                m["instructions"] = ins
                m.pop("iterations_per_s", None)
                m["est_cycles"] = {"unit": "cycles", "better": "lower", "value": sum(r.est_cycles) / len(r.est_cycles)}
                s["counted"] = self.identity
                s["gate"] = ["instructions", *(g for g in gate[1:] if g != "instructions")]
            if r.duration_s > 0:
                m["cpu_pct"] = {"unit": "%", "better": "lower", "value": 100 * r.cpu_s / r.duration_s}
            m["cpu_s"] = {"unit": "s", "better": "lower", "value": r.cpu_s}
            if r.peak_rss_mb is not None:
                m["peak_rss_mb"] = {"unit": "MB", "better": "lower", "value": r.peak_rss_mb}
            warns = s.setdefault("warnings", [])
            if r.iterations > 1:
                warns.append(f"each round is {r.iterations} calls: a round's time / {r.iterations} is one per-call time")
            kept = len((m.get("latency_ms") or m.get("instructions") or {}).get("samples") or [])
            if kept and kept < len(r.data):
                how = "evenly spaced rounds" if self.tails else f"the median of a block of {len(r.data) // kept}-{-(-len(r.data) // kept)} consecutive rounds"
                warns.append(f"{len(r.data)} rounds summarized into {kept} samples, each {how} (--inferbench-max-samples)")
            if r.failed:
                s["status"], s["error"] = "failed", r.failed
        run["scenarios"].extend(self._raised(gate))
        ok = sum(1 for s in run["scenarios"] if s["status"] == "ok")
        failed = sum(1 for s in run["scenarios"] if s["status"] == "failed")
        total = len(run["scenarios"])
        run["summary"].update(total=total, succeeded=ok, failed=failed, success_rate=ok / max(1, ok + failed))
        try:
            env = json.loads(self._run(["sysinfo", "--json"]))
        except (InferbenchError, ValueError):  # the fingerprint is context: a run without it is still a run
            env = {}
        env["pytest"] = {k.removeprefix("pytest_"): v for k, v in run.get("environment", {}).items()}
        run["environment"] = env
        run["config"] = {"args": ["pytest", *self.config.invocation_params.args], "dir": str(self.config.rootpath)}
        run["started_at"] = self.started.isoformat().replace("+00:00", "Z")
        run["finished_at"] = _dt.datetime.now(_dt.timezone.utc).isoformat().replace("+00:00", "Z")

    def _raised(self, gate: list[str]) -> list[dict[str, Any]]:
        """_raised is the failed scenarios of the tests that raised inside the benchmark fixture:
        they have no rounds, so the pytest-benchmark JSON (and the import) has no place for them.
        They are named as the import names the others (benchmark: the group, or the test's name
        without parameters; scenario: the test's name, or its parameters or default)."""
        out = []
        for r in self.records.values():
            if r.data or not r.failed:
                continue
            base, _, param = r.name.partition("[")
            bench, sc = (r.group, r.name) if r.group else (base, param.rstrip("]") or "default")
            s: dict[str, Any] = {"benchmark": bench, "scenario": sc, "subject": "pytest", "status": "failed", "error": r.failed,
                                 "source": r.fullname, "duration_s": 0, "iterations": {"warmup": 0, "measured": 0, "failed": 1},
                                 "started_at": self.started.isoformat().replace("+00:00", "Z"), "gate": gate}
            if r.params:
                s["params"] = r.params
            out.append(s)
        return out

    def compare_args(self, baseline: str, run_json: Path) -> list[str]:
        """compare_args is the inferbench compare command line of the session against baseline."""
        c = self.config
        args = ["compare", baseline, str(run_json), "--results-dir", c.getoption("inferbench_output_dir")]
        if store := c.getoption("inferbench_store"):
            args += ["--store", store]
        thresholds = c.getoption("inferbench_threshold")
        if not thresholds and not (Path(c.invocation_params.dir) / THRESHOLDS_FILE).is_file():
            thresholds = [DEFAULT_THRESHOLD, COUNT_THRESHOLD] if self.counter else [DEFAULT_THRESHOLD]
        for t in thresholds:
            args += ["--threshold", t]
        for g in c.getoption("inferbench_gate"):
            args += ["--gate", g]
        return args

    def _compare(self, session: pytest.Session, baseline: str, run_json: Path) -> None:
        c = self.config
        args = self.compare_args(baseline, run_json)
        with tempfile.TemporaryDirectory(prefix=f"{_TEMP_PREFIX}{os.getpid()}-compare-") as tmp:
            out = Path(tmp) / "compare.json"
            # One comparison: the table on stdout and the JSON beside it.
            p = _binary.execute([*args, "--format", "text", "--json", str(out)], cwd=c.invocation_params.dir)
            if p.returncode == 2 and "unknown flag: --json" in p.stderr:
                # A binary older than compare --json (the pure-Python wheel runs the one on PATH):
                # the JSON, then the text, compared twice.
                p = _binary.execute([*args, "--format", "json", "-o", str(out)], cwd=c.invocation_params.dir)
                text = _binary.execute([*args, "--format", "text"], cwd=c.invocation_params.dir).stdout
                p = type(p)(p.args, p.returncode, text, p.stderr)
            if p.returncode not in (0, EXIT_REGRESSION) or not out.is_file():
                raise error_for(p.returncode or 1, args, p.stderr)
            verdict = parse_comparison(out.read_text(), p.returncode, p.stdout)
        self.comparison = verdict
        self.lines.append(p.stdout.rstrip())
        if verdict.failed:
            self.lines.append(f"inferbench: {message_of(p.stderr)} against {baseline}: the session fails with inferbench compare's exit code {p.returncode}")
            session.exitstatus = p.returncode
        else:
            self.lines.append(f"inferbench: no regression against {baseline}")


# The temporary folders of a session's save and comparison: inferbench-pytest-PID-..., so that a
# session killed while it saves (SIGKILL: no finally runs) leaves a folder that the next session
# removes, its process being gone (_remove_stale_temp).
_TEMP_PREFIX = "inferbench-pytest-"


def _remove_stale_temp() -> None:
    """_remove_stale_temp removes the temporary folders of sessions whose process has ended. Not on
    Windows, where os.kill(pid, 0) is no liveness check."""
    if sys.platform == "win32":
        return
    try:
        entries = list(Path(tempfile.gettempdir()).glob(_TEMP_PREFIX + "*"))
    except OSError:
        return
    for d in entries:
        pid = d.name[len(_TEMP_PREFIX):].partition("-")[0]
        if not pid.isdigit() or int(pid) == os.getpid() or not d.is_dir() or d.is_symlink():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # alive (another session saving now)
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError, OSError):
            continue  # alive under another user, or no answer: leave it
        shutil.rmtree(d, ignore_errors=True)


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name) or "pytest"


def _link_latest(base: Path, rid: str) -> None:
    """_link_latest points base/latest at the run folder, as inferbench run does (not on Windows)."""
    if sys.platform == "win32":
        return
    link = base / "latest"
    tmp = base / f".latest-{rid}"
    try:
        os.symlink(rid, tmp)
        os.replace(tmp, link)
    except OSError:
        tmp.unlink(missing_ok=True)


def _fixture(request: pytest.FixtureRequest) -> BenchmarkFixture:
    sess: Session = request.config.stash[_SESSION]
    node = request.node
    callspec = getattr(node, "callspec", None)
    o = sess.options_for(node)
    rec = Record(name=node.name, fullname=node.nodeid, group=o.group,
                 params=dict(callspec.params) if callspec else None, options=o)
    return BenchmarkFixture(rec, lambda r: sess.records.__setitem__(r.fullname, r), disabled=sess.disabled,
                            profile=None if sess.counter else request.config.getoption("inferbench_cprofile"),
                            top=request.config.getoption("inferbench_cprofile_top"), counter=sess.counter)


@pytest.fixture
def inferbench_benchmark(request: pytest.FixtureRequest) -> BenchmarkFixture:
    """inferbench_benchmark times a function over calibrated rounds: pytest-benchmark's
    ``benchmark`` fixture, whose results --inferbench-save writes as an inferbench run."""
    return _fixture(request)


class _Alias:
    """_Alias holds the ``benchmark`` fixture, registered only when pytest-benchmark is not active
    (its fixture of that name is left alone)."""

    @pytest.fixture
    def benchmark(self, request: pytest.FixtureRequest) -> BenchmarkFixture:
        """benchmark is inferbench_benchmark under pytest-benchmark's name."""
        return _fixture(request)
