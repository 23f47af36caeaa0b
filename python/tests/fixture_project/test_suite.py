"""A project's benchmark suite, written for pytest-benchmark and switched to inferbench by renaming
the fixture (benchmark -> inferbench_benchmark). FIXTURE_SLOWDOWN=5 makes every function five times
slower: the "slowed variant" the plugin's tests compare against."""

import os
import time

import pytest

SLOWDOWN = float(os.environ.get("FIXTURE_SLOWDOWN", "1"))


def nap(seconds):
    """nap waits for seconds. A sleeping function, not a spinning one: on a loaded machine (CI
    beside other jobs) a spin is preempted and its median moves by more than the threshold, a
    sleep wakes on time."""
    time.sleep(seconds * SLOWDOWN)
    return seconds


def tokenize(text):
    time.sleep(0.001 * SLOWDOWN)
    return text.split()


def test_tokenize(inferbench_benchmark):
    words = inferbench_benchmark(tokenize, "the quick brown fox")
    assert words == ["the", "quick", "brown", "fox"]


@pytest.mark.parametrize("ms", [1, 3])
def test_nap(inferbench_benchmark, ms):
    assert inferbench_benchmark(nap, ms / 1000) == ms / 1000


@pytest.mark.inferbench(group="pedantic")
def test_pedantic(inferbench_benchmark):
    seen = []

    def setup():
        return (0.001,), {}

    got = inferbench_benchmark.pedantic(nap, setup=setup, teardown=lambda s: seen.append(s), rounds=8, warmup_rounds=1)
    assert got == 0.001
    # teardown after every round, warm-up included; once when benchmarks are disabled (pytest-xdist)
    assert len(seen) == (1 if inferbench_benchmark.disabled else 9)


def test_not_a_benchmark():
    assert sum(range(10)) == 45
