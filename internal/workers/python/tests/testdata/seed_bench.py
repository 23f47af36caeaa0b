"""Seed-style benchmarks, as users drop them into benches/ (used by the tests)."""

import time


def run_sum_benchmark(size=1000):
    """Sum a range; prints like a seed benchmark does."""
    start_time = time.time()
    result = sum(range(int(size)))
    print("Execution time: %.6f seconds" % (time.time() - start_time))
    return {"execution_time": time.time() - start_time, "result_size": 1,
            "nested": {"size_100": {"time": 0.5}}, "label": "not a number"}


def benchmark_noop():
    return 42


def helper_not_a_benchmark():
    return None


def benchmark_items(n=5):
    """Processes n items per call and says so: throughput counts them."""
    return {"items": int(n), "checksum": float(n)}
