"""The fixture's warm-up, calibration and the samples it keeps (inferbench._timing), on fake functions."""

from __future__ import annotations

import statistics

import pytest

from inferbench import _timing


class FakeFunction:
    """FakeFunction is a function whose calls take `warm` seconds each, except the first `cold`
    calls, which take `first` seconds each: timed(n) returns what n calls would take."""

    def __init__(self, warm: float, first: float, cold: int = 1) -> None:
        self.warm, self.first, self.cold, self.calls = warm, first, cold, 0

    def timed(self, n: int) -> float:
        slow = max(0, min(n, self.cold - self.calls))
        self.calls += n
        return slow * self.first + (n - slow) * self.warm


def test_calibration_after_warm_up_uses_warm_calls():
    # The 186 ns function: its first call took longer than the 5 us round (a cold call),
    # and calibration before the warm-up settled on 1 iteration a round instead of ~27.
    f = FakeFunction(warm=186e-9, first=8e-6)
    per_call = _timing.warm_up(f.timed, 0.01)
    assert per_call == pytest.approx(186e-9)
    loops, t = _timing.calibrate(f.timed, per_call, 5e-6)
    assert loops == 27 and t >= 5e-6  # ceil(5 us / 186 ns)


def test_warm_up_spends_its_time_and_two_passes():
    f = FakeFunction(warm=1e-3, first=1e-3)
    _timing.warm_up(f.timed, 0.05)
    assert 0.05 <= f.calls * 1e-3 < 0.2
    slow = FakeFunction(warm=0.5, first=0.5)  # a slow function: two calls, not 0.05 s worth
    _timing.warm_up(slow.timed, 0.05)
    assert slow.calls == 2


def test_calibrate_never_under_the_shortest_round():
    # An estimate that is too high (a pass slowed by an interruption) gives rounds that are too
    # short: they are measured and the iterations raised.
    f = FakeFunction(warm=1e-6, first=1e-6)
    loops, t = _timing.calibrate(f.timed, 1e-5, 50e-6)
    assert 50 <= loops <= 55 and t >= 50e-6


def test_min_round_is_a_hundred_grains():
    coarse = iter(range(0, 10**9, 1000))  # a timer that ticks by 1000 s... of fake seconds

    def timer() -> float:
        return float(next(coarse)) * 1e-6  # a 1 ms grain

    assert _timing.grain(timer) == pytest.approx(1e-3)
    assert _timing.min_round(5e-6, timer) == pytest.approx(0.1)  # 100 grains, not min_time
    assert _timing.min_round(5e-6, _timing.perf_counter) >= 5e-6


def test_summarize_block_medians_and_tail_rounds():
    data = [1.0] * 1000
    data[::10] = [50.0] * 100  # one round in ten interrupted
    kept = _timing.summarize(data, 99, tails=False)
    assert len(kept) == 99 and set(kept) == {1.0}  # block medians drop the interruptions
    assert statistics.median(kept) == statistics.median(data)
    tails = _timing.summarize(data, 500, tails=True)
    assert len(tails) == 500 and 50.0 in tails  # rounds as measured: the tail survives
    assert _timing.summarize(data[:50], 99, tails=False) == data[:50]
    assert len(_timing.summarize(data, 0, tails=False)) == 1000


def test_load_timer():
    assert _timing.load_timer("time.process_time") is __import__("time").process_time
    assert _timing.load_timer("perf_counter") is __import__("time").perf_counter
    with pytest.raises(ValueError, match="perf_counter_ns returns int"):
        _timing.load_timer("time.perf_counter_ns")
    with pytest.raises(ValueError, match="no_such"):
        _timing.load_timer("time.no_such")
