"""A project's benchmark suite, written for pytest-benchmark and switched to inferbench by renaming
the fixture (benchmark -> inferbench_benchmark). FIXTURE_SLOWDOWN=3 makes every function three
times slower: the "slowed variant" the plugin's tests compare against."""

import os
import time

import pytest

SLOWDOWN = float(os.environ.get("FIXTURE_SLOWDOWN", "1"))


def busy(seconds):
    """busy spins for seconds: CPU work whose time the machine's load barely stretches."""
    end = time.perf_counter() + seconds * SLOWDOWN
    while time.perf_counter() < end:
        pass
    return seconds


def tokenize(text):
    time.sleep(0.001 * SLOWDOWN)
    return text.split()


def test_tokenize(inferbench_benchmark):
    words = inferbench_benchmark(tokenize, "the quick brown fox")
    assert words == ["the", "quick", "brown", "fox"]


@pytest.mark.parametrize("size", [1, 4])
def test_busy(inferbench_benchmark, size):
    assert inferbench_benchmark(busy, 0.0005 * size) == 0.0005 * size


@pytest.mark.inferbench(group="pedantic")
def test_pedantic(inferbench_benchmark):
    seen = []

    def setup():
        return (0.001,), {}

    got = inferbench_benchmark.pedantic(busy, setup=setup, teardown=lambda s: seen.append(s), rounds=8, warmup_rounds=1)
    assert got == 0.001
    assert len(seen) == 9  # teardown after every round, warm-up included


def test_not_a_benchmark():
    assert sum(range(10)) == 45
