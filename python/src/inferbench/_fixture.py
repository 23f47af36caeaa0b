"""The benchmark fixture (``benchmark``, ``inferbench_benchmark``): pytest-benchmark's call
style, its ``pedantic`` and ``weave``, timed over calibrated rounds (_timing.py) or counted under
callgrind (_counted.py). docs/pytest.md lists where it differs from pytest-benchmark's, and why.
"""

from __future__ import annotations

import contextlib
import cProfile
import gc
import importlib
import io
import math
import pstats
import statistics
import sys
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from inferbench import _counted, _timing

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]


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
    # pytest-benchmark's --benchmark-warmup with --benchmark-warmup-iterations N: the warm-up
    # rounds after calibration are max(1, N // iterations per round), at most the rounds.
    warmup_iterations: int | None = None
    # pytest-benchmark's --benchmark-precision and --benchmark-confidence: rounds stop once the
    # mean's relative margin of error at that confidence is below precision (after min_rounds).
    precision: float | None = None
    confidence: float = 0.99
    cprofile: str | None = None  # cProfile's sort key: one more round profiled
    cprofile_dump: str | None = None  # pytest-benchmark's --benchmark-cprofile-dump prefix


class FixtureAlreadyUsed(Exception):
    """FixtureAlreadyUsed: the fixture was called a second time in one test (pytest-benchmark's name)."""


class Stats(dict):  # type: ignore[type-arg]
    """Stats is the summary of a benchmark's rounds (seconds per call) as pytest-benchmark shows
    it: ``benchmark.stats["min"]``, ``benchmark.stats.min`` and ``benchmark.stats.stats.min``."""

    def __getattr__(self, name: str) -> Any:
        if name == "stats":
            return self
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


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
    warmup_rounds, iterations)`` runs exactly what it is told, as pytest-benchmark does;
    ``fixture.weave(target)`` times every call of a function or method during the test. One use
    per test. When benchmarks are disabled (--benchmark-disable, pytest-xdist) each calls fn
    once, untimed.
    """

    def __init__(self, record: Record, store: Callable[[Record], None], disabled: bool = False, profile: str | None = None, top: int = 10,
                 counter: _counted.Counter | None = None) -> None:
        self._counter = counter
        self._record = record
        self._store = store
        self._used = False
        self._disabled = disabled
        self._profile = profile or record.options.cprofile
        self._top = top
        self._rollbacks: list[Callable[[], None]] = []
        self.extra_info = record.extra_info

    @property
    def name(self) -> str:
        return self._record.name

    @property
    def fullname(self) -> str:
        return self._record.fullname

    @property
    def params(self) -> dict[str, Any] | None:
        return self._record.params

    @property
    def param(self) -> str | None:
        return self._record.name.partition("[")[2].rstrip("]") or None if self._record.params else None

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
    def enabled(self) -> bool:
        return not self._disabled

    @property
    def stats(self) -> Stats | None:
        """stats is the summary of the rounds so far (seconds per call), None before the call."""
        return Stats(_timing.stats(self._record.data, self._record.iterations)) if self._record.data else None

    def _begin(self) -> None:
        if self._used:
            raise FixtureAlreadyUsed(f"{self._record.fullname}: the benchmark fixture can be called once per test (use parametrize for several)")
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
            rounds = o.rounds or max(o.min_rounds, math.ceil(o.max_time / max(duration, 1e-9)))
            warmup = o.warmup if o.warmup_iterations is None else min(rounds, max(1, o.warmup_iterations // loops))
            for _ in range(warmup):
                timed(loops)
            # The rounds stop once they have lasted max_time (and min_rounds ran): on a loaded
            # machine they last longer than calibration said, and the session would too.
            deadline = math.inf if o.rounds else o.max_time
            data: list[float] = []
            spent = 0.0
            precise = _Precision(o)
            with _Window() as w:
                started = time.time()
                for i in range(rounds):
                    t = timed(loops)
                    data.append(t / loops)
                    precise.add(t / loops)
                    spent += t
                    if i + 1 >= o.min_rounds and (spent >= deadline or precise.reached()):
                        break
            if self._profile:
                self._record.profile = _profile(lambda: timed(loops), self._profile, self._top, self._dump_path())
        self._finish(data, loops, warmup, started, w)
        return fn(*args, **kwargs)

    def _dump_path(self) -> Path | None:
        p = self._record.options.cprofile_dump
        if not p:
            return None
        slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in self._record.name)
        return Path(f"{p}-{slug}.prof")

    def _count(self, iterations: int | None, rounds: int | None, fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
        """_count is instruction mode: a warm-up, iterations per round from one call's count
        (unless given), then rounds each counted by callgrind, each from one state (_settled)."""
        fresh_code()
        for _ in range(3):
            fn(*args, **kwargs)  # warm-up: nothing is counted outside the rounds
        counter = self._counter
        assert counter is not None
        with _settled():
            n = iterations or _counted.iterations_for(counter, lambda: fn(*args, **kwargs))

        def calls() -> None:
            for _ in range(n):
                fn(*args, **kwargs)

        # One round's calls, not counted: the interpreter specializes an instruction after it ran
        # some 50 times, and the first counted round would hold the change.
        calls()
        data, est = [], []
        with _untraced(), _Window() as w:
            started = time.time()
            for _ in range(rounds or _counted.ROUNDS):
                with _settled():
                    ev = counter.count(calls)
                data.append(ev.get("Ir", 0) / n)
                est.append(_counted.est_cycles(ev) / n)
        self._record.measure, self._record.est_cycles = _counted.MODE, est
        self._finish(data, n, 3 + n, started, w)
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
        warmup_rounds, as pytest-benchmark does: setup (called before each round, may return
        (args, kwargs)) and teardown (after each round, with the same arguments) are not timed,
        and with iterations > 1 one more call (and teardown) gives the result."""
        self._begin()
        for what, v, least in (("iterations", iterations, 1), ("rounds", rounds, 1), ("warmup_rounds", warmup_rounds, 0)):
            if not isinstance(v, int) or isinstance(v, bool) or v < least:
                raise ValueError(f"{self._record.fullname}: pedantic: {what} = {v!r}: want an int, {least} or more")
        if setup is not None and iterations > 1:
            raise ValueError(f"{self._record.fullname}: pedantic with setup takes iterations=1 (setup runs once per round)")
        kwargs = kwargs or {}
        has_args = bool(args or kwargs)
        result: Any = None
        timer = self._timer() if not self._disabled else time.perf_counter

        def arguments() -> tuple[Any, Any]:
            if setup is not None and (got := setup()):
                if has_args:
                    raise TypeError(f"{self._record.fullname}: pedantic: setup returned arguments and args or kwargs were given too: give one or the other")
                return got
            return args, kwargs

        def one() -> float:
            nonlocal result
            a, k = arguments()
            if iterations == 1:  # no loop around a single call: its cost would be measured
                t0 = timer()
                result = target(*a, **k)
                t = timer() - t0
            else:
                r = range(iterations)
                t0 = timer()
                for _ in r:
                    target(*a, **k)
                t = timer() - t0
            if teardown is not None:
                teardown(*a, **k)
            return t

        def last() -> Any:
            # Looped rounds keep no result: one more call gives it, as pytest-benchmark's.
            a, k = arguments()
            out = target(*a, **k)
            if teardown is not None:
                teardown(*a, **k)
            return out

        if self._disabled:
            return last()  # once, untimed, and teardown after it
        if self._counter is not None:
            self._pedantic_counted(target, arguments, teardown, rounds, warmup_rounds, iterations)
            return last() if iterations > 1 else self._result
        with _untraced(), _timing.gc_off(self._record.options.disable_gc):
            for _ in range(warmup_rounds):
                one()
            data: list[float] = []
            with _Window() as w:
                started = time.time()
                for _ in range(rounds):
                    data.append(one() / iterations)
        self._finish(data, iterations, warmup_rounds, started, w)
        if iterations > 1:
            result = last()
        if self._profile:
            with _untraced():
                self._record.profile = _profile(one, self._profile, self._top, self._dump_path())
            self._store(self._record)
        return result

    def _pedantic_counted(self, target: Callable[..., Any], arguments: Callable[[], tuple[Any, Any]], teardown: Callable[..., Any] | None,
                          rounds: int, warmup_rounds: int, iterations: int) -> None:
        counter = self._counter
        assert counter is not None
        self._result = None
        fresh_code()
        data, est = [], []
        with _untraced():
            for _ in range(warmup_rounds):
                a, k = arguments()
                for _ in range(iterations):
                    target(*a, **k)
                if teardown is not None:
                    teardown(*a, **k)
            with _Window() as w:
                started = time.time()
                # At most ROUNDS counted: a count barely moves from round to round, and each
                # round costs callgrind a dump of the whole program's costs.
                for _ in range(min(rounds, _counted.ROUNDS)):
                    a, k = arguments()

                    def calls(a: Any = a, k: Any = k) -> None:
                        for _ in range(iterations):
                            self._result = target(*a, **k)

                    with _settled():
                        ev = counter.count(calls)
                    if teardown is not None:
                        teardown(*a, **k)
                    data.append(ev.get("Ir", 0) / iterations)
                    est.append(_counted.est_cycles(ev) / iterations)
        self._record.measure, self._record.est_cycles = _counted.MODE, est
        self._finish(data, iterations, warmup_rounds, started, w)

    def weave(self, target: Any, **kwargs: Any) -> None:
        """weave replaces target (a function or method, or its dotted name: "time.sleep",
        "pkg.mod.Class.method") with a wrapper that benchmarks its first call during the test, as
        pytest-benchmark's weave does (with aspectlib); the original is put back after the test.
        aspectlib's options (lazy=..., ...) are accepted and have no effect."""
        owner, name, original = _resolve(target)

        def wrapper(*a: Any, **k: Any) -> Any:
            if self._used:
                return original(*a, **k)
            return self(original, *a, **k)

        setattr(owner, name, wrapper)
        self._rollbacks.append(lambda: setattr(owner, name, original))

    patch = weave

    def cleanup(self) -> None:
        """cleanup puts back what weave replaced."""
        while self._rollbacks:
            self._rollbacks.pop()()

    def _finish(self, data: list[float], iterations: int, warmup: int, started: float, w: _Window) -> None:
        r = self._record
        r.data, r.iterations, r.warmup_rounds, r.started = data, iterations, warmup, started
        r.duration_s, r.cpu_s, r.peak_rss_mb = w.wall, w.cpu, w.peak_mb
        self._store(r)


class _Precision:
    """_Precision is pytest-benchmark's --benchmark-precision: reached once the relative margin
    of error of the rounds' mean, at --benchmark-confidence, is at most the precision. The mean
    and variance are kept as rounds come (Welford's method): a fast function runs 100,000s of
    rounds."""

    def __init__(self, o: Options) -> None:
        self.precision = o.precision
        self.z = statistics.NormalDist().inv_cdf(0.5 + o.confidence / 2) if o.precision else 0.0
        self.n, self.mean, self.m2 = 0, 0.0, 0.0

    def add(self, x: float) -> None:
        self.n += 1
        d = x - self.mean
        self.mean += d / self.n
        self.m2 += d * (x - self.mean)

    def reached(self) -> bool:
        if not self.precision or self.n < 2 or self.mean <= 0:
            return False
        return self.z * math.sqrt(self.m2 / (self.n - 1)) / math.sqrt(self.n) / self.mean <= self.precision


@contextlib.contextmanager
def _settled() -> Iterator[None]:
    """_settled runs a counted round from one state whatever ran before it: the cyclic garbage
    collector is run to its end first and then kept off (the session's earlier tests left objects
    whose collection would otherwise fall inside some tests' rounds, and a larger heap made each
    collection cost more: the same tests counted 2.7-3.5% apart in a 5-test and a 17-test
    session), and the objects alive are frozen out of the collector's generations."""
    was = gc.isenabled()
    gc.collect()
    freeze = getattr(gc, "freeze", None)
    if freeze is not None:
        freeze()
    gc.disable()
    try:
        yield
    finally:
        if freeze is not None:
            gc.unfreeze()
        if was:
            gc.enable()


def fresh_code() -> None:
    """fresh_code gives every Python function a fresh copy of its code object (nested code
    objects, comprehensions', included) before a test is counted: CPython (3.11 on) specializes
    code objects for the types their callers passed, so a library function that the session's
    earlier tests called with their own objects runs the test's calls on other paths, and its
    count moved with its neighbours (1.8% here for a function called by 60 others before).
    From a fresh copy, the test's own warm-up calls specialize it."""
    if sys.version_info < (3, 11):
        return  # no specializing interpreter
    fresh: dict[int, types.CodeType] = {}

    def copy(co: types.CodeType) -> types.CodeType:
        if (c := fresh.get(id(co))) is None:
            consts = tuple(copy(k) if isinstance(k, types.CodeType) else k for k in co.co_consts)
            c = fresh[id(co)] = co.replace(co_consts=consts)
        return c

    for f in gc.get_objects():
        if type(f) is types.FunctionType:
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                f.__code__ = copy(f.__code__)


def _resolve(target: Any) -> tuple[Any, str, Callable[..., Any]]:
    """_resolve returns the object holding target (a module or class), its attribute name and the
    callable, for a function or method object or its dotted name."""
    if isinstance(target, str):
        parts = target.split(".")
        for i in range(len(parts) - 1, 0, -1):
            try:
                obj: Any = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            for p in parts[i:-1]:
                obj = getattr(obj, p)
            return obj, parts[-1], getattr(obj, parts[-1])
        raise ValueError(f"weave {target!r}: no module in that name (want module.function or module.Class.method)")
    fn = getattr(target, "__func__", target)
    mod = sys.modules.get(getattr(fn, "__module__", "") or "")
    qual = getattr(fn, "__qualname__", "")
    if mod is None or not qual or "<locals>" in qual:
        raise ValueError(f"weave {target!r}: cannot find where it is defined (give its dotted name, module.function)")
    obj = mod
    *outer, name = qual.split(".")
    for p in outer:
        obj = getattr(obj, p)
    return obj, name, getattr(obj, name)


def _profile(round_: Callable[[], Any], sort: str, top: int, dump: Path | None = None) -> str:
    """_profile runs one more round under cProfile and returns its top functions as pstats prints
    them; dump, when given, receives the profile (pstats' file, --benchmark-cprofile-dump)."""
    prof = cProfile.Profile()
    prof.enable()
    try:
        round_()
    finally:
        prof.disable()
    if dump is not None:
        dump.parent.mkdir(parents=True, exist_ok=True)
        prof.dump_stats(dump)
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

