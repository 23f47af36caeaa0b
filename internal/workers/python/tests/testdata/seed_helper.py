"""Seed 003's shape: a run_* helper the benchmark calls is not a benchmark itself."""


def run_training_benchmark(callbacks):
    return len(callbacks)


def benchmark_training_overhead():
    """Measure training time with and without carbon tracking."""
    return run_training_benchmark(callbacks=[]) + run_training_benchmark(callbacks=[1])
