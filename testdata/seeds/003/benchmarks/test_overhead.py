import time


class Eco2AICallback:
    """A stand-in for the plugin's callback: three times the work of the step itself, so the
    overhead (about 1000%) stays far above 0 on a noisy machine (a percentage cannot be negative)."""

    def on_step(self):
        sum(range(1500))


def run_training_benchmark(callbacks):
    start = time.perf_counter()
    for _ in range(200):
        sum(range(500))
        for cb in callbacks:
            cb.on_step()
    return time.perf_counter() - start


def benchmark_training_overhead():
    """Measure training time with and without carbon tracking."""
    # The fastest of three runs each: a preempted run on a busy machine does not count.
    baseline_time = min(run_training_benchmark(callbacks=[]) for _ in range(3))
    callback_time = min(run_training_benchmark(callbacks=[Eco2AICallback()]) for _ in range(3))
    overhead_percent = ((callback_time - baseline_time) / baseline_time) * 100
    return {"overhead_percent": overhead_percent}
