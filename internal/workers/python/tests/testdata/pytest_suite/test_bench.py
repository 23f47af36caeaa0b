# Tests the worker's pytest adapter runs as they are (test_pytest_adapter.py): collected by
# pytest itself, their fixtures and marks applied, the benchmark fixture the adapter's.
import contextvars
import threading

import pytest

LOCAL = threading.local()
VAR = contextvars.ContextVar("var", default=None)
CALLS = []


def add(a, b):
    CALLS.append(1)
    return a + b


@pytest.fixture
def offset():
    return 40


def test_add(benchmark, offset):
    assert benchmark(add, offset, 2) == 42


@pytest.mark.parametrize("n", [1, 8])
def test_param(inferbench_benchmark, n):
    assert inferbench_benchmark(sum, range(n)) == n * (n - 1) // 2


def test_thread_state(benchmark):
    # What the test sets around its benchmark call holds in the calls: they run in its thread.
    LOCAL.value, token = 7, VAR.set("set")
    try:
        assert benchmark(lambda: (LOCAL.value, VAR.get())) == (7, "set")
    finally:
        VAR.reset(token)


def test_pedantic_setup(benchmark):
    seen = []

    def setup():
        seen.append(1)
        return (len(seen),), {}

    assert benchmark.pedantic(lambda k: k, setup=setup) == len(seen)


def test_pedantic_teardown(benchmark):
    # pytest-benchmark's teardown(*args, **kwargs) after each call (the suite in
    # python/tests/fixture_project has one).
    torn = []
    assert benchmark.pedantic(add, args=(2, 3), teardown=lambda a, b: torn.append(a + b), rounds=3) == 5
    assert torn and set(torn) == {5}


def test_fails_before(benchmark):
    assert False, "broken before the call"


def test_fails_after(benchmark):
    benchmark(add, 1, 1)
    assert False, "broken after the call"


def test_skipped(benchmark):
    pytest.skip("no GPU here")


def test_no_call(benchmark):
    pass
