"""How the pytest plugin times a function: warm-up, calibration, rounds, and the samples kept.

A round is `iterations` calls of the function between two reads of the timer; its time divided by
its iterations is the round's per-call time. Before any round is kept the function is warmed up
(its first calls are slower: imports, caches, the interpreter specialising its code), and only
then calibrated, so that iterations are chosen from warm calls; a round must last at least the
minimum round time, which is never below what the timer can resolve (`grain`).
"""

from __future__ import annotations

import gc
import importlib
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

Timer = Callable[[], float]

# A round lasts at least this many grains of its timer: the read of the timer then costs at most 1%
# of the round, and its resolution as much.
GRAIN_FACTOR = 100


def load_timer(name: str) -> Timer:
    """load_timer returns the timer named NAME: "perf_counter", "time.process_time" or any
    "module.function" returning seconds as a float, as pytest-benchmark's --benchmark-timer."""
    mod, _, attr = name.rpartition(".")
    try:
        fn = getattr(importlib.import_module(mod or "time"), attr)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"timer {name!r}: {e} (want e.g. time.perf_counter, time.process_time or module.function)") from None
    if not callable(fn) or not isinstance(fn(), float):
        raise ValueError(f"timer {name!r}: not a function returning seconds as a float (time.perf_counter_ns returns int nanoseconds: use time.perf_counter)")
    return fn  # type: ignore[no-any-return]


_GRAINS: dict[Timer, float] = {}


def grain(timer: Timer) -> float:
    """grain is the smallest time the timer can tell apart from zero: the least positive difference
    of two consecutive reads, which is its resolution or the cost of reading it, whichever is
    larger (about 50 ns for perf_counter on Linux, a few hundred for process_time)."""
    g = _GRAINS.get(timer)
    if g is None:
        g = math.inf
        for _ in range(20):
            t0 = timer()
            t1 = timer()
            while t1 == t0:
                t1 = timer()
            g = min(g, t1 - t0)
        _GRAINS[timer] = g
    return g


def min_round(min_time: float, timer: Timer) -> float:
    """min_round is the shortest round kept: min_time, and never under GRAIN_FACTOR grains."""
    return max(min_time, GRAIN_FACTOR * grain(timer))


def warm_up(timed: Callable[[int], float], warmup_time: float) -> float:
    """warm_up calls the function in passes of doubling size until warmup_time has been spent and
    at least two passes ran, and returns the per-call time of the last (warmest) pass."""
    n, spent, passes, per_call = 1, 0.0, 0, math.inf
    while True:
        t = timed(n)
        spent += t
        passes += 1
        per_call = t / n
        if spent >= warmup_time and passes >= 2:
            return per_call
        # Grow a pass up to a quarter of what is left, so the warm-up ends close to warmup_time.
        left = max(warmup_time - spent, 0.0)
        if per_call > 0 and t < left / 4:
            n = max(n * 2, min(n * 16, int(left / 4 / per_call)))


def calibrate(timed: Callable[[int], float], per_call: float, shortest: float) -> tuple[int, float]:
    """calibrate returns (iterations, round time): the fewest iterations whose round lasts at
    least shortest, starting from the warm per-call estimate and checked on the fastest of three
    rounds (one slow round from an interruption cannot make the iterations too few)."""
    loops = max(1, math.ceil(shortest / per_call)) if per_call > 0 else 1
    t = 0.0
    for _ in range(8):
        t = min(timed(loops) for _ in range(3))
        if t >= shortest:
            return loops, t
        loops = max(loops + 1, math.ceil(loops * shortest / max(t, 1e-12) * 1.05))
    return loops, t


class gc_off:
    """gc_off disables the garbage collector while rounds run when asked (pytest-benchmark's
    --benchmark-disable-gc), restoring its state after."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def __enter__(self) -> None:
        self.was = gc.isenabled()
        if self.on:
            gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.on and self.was:
            gc.enable()


def summarize(data: list[float], cap: int, tails: bool) -> list[float]:
    """summarize returns the samples kept of a test's rounds: all of them up to cap; beyond it, for
    a median gate, the median of each of cap blocks of consecutive rounds (a block's median is as
    robust as the rounds' to the rounds an interruption slowed, and far more stable than one
    round), and for a tail gate cap rounds evenly spaced, as measured (a tail needs single
    rounds). cap 0 keeps every round."""
    n = len(data)
    if cap <= 0 or n <= cap:
        return list(data)
    if tails:
        return [data[i * n // cap] for i in range(cap)]
    return [statistics.median(data[i * n // cap : (i + 1) * n // cap]) for i in range(cap)]


def stats(data: list[float], iterations: int) -> dict[str, Any]:
    """stats is pytest-benchmark's stats object of the rounds data (seconds per call)."""
    n = len(data)
    s = sorted(data)
    q1, median, q3 = (statistics.quantiles(s, n=4, method="inclusive") if n > 1 else [s[0]] * 3)
    iqr = q3 - q1
    mean = statistics.fmean(s)
    std = statistics.stdev(s) if n > 1 else 0.0
    lo, hi = q1 - 1.5 * iqr, q3 + 1.5 * iqr
    return {
        "min": s[0], "max": s[-1], "mean": mean, "stddev": std, "rounds": n, "median": median,
        "iqr": iqr, "q1": q1, "q3": q3,
        "iqr_outliers": sum(1 for x in s if x < lo or x > hi),
        "stddev_outliers": sum(1 for x in s if abs(x - mean) > std),
        "outliers": f"{sum(1 for x in s if abs(x - mean) > std)};{sum(1 for x in s if x < lo or x > hi)}",
        "ld15iqr": next((x for x in s if x >= lo), s[0]), "hd15iqr": next((x for x in reversed(s) if x <= hi), s[-1]),
        "ops": 1 / mean if mean > 0 else 0.0, "total": sum(s) * iterations, "iterations": iterations,
    }


def quantile(sorted_data: list[float], q: float) -> float:
    """quantile is the q-th quantile (0..1) of sorted data, interpolated."""
    if not sorted_data:
        return math.nan
    pos = q * (len(sorted_data) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_data) - 1)
    return sorted_data[lo] + (sorted_data[hi] - sorted_data[lo]) * (pos - lo)


perf_counter = time.perf_counter
