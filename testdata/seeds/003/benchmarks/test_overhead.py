import time


class Eco2AICallback:
    """A stand-in for the plugin's callback: a little work per step."""

    def on_step(self):
        sum(range(200))


def run_training_benchmark(callbacks):
    start = time.perf_counter()
    for _ in range(200):
        sum(range(500))
        for cb in callbacks:
            cb.on_step()
    return time.perf_counter() - start


def benchmark_training_overhead():
    """Measure training time with and without carbon tracking."""
    baseline_time = run_training_benchmark(callbacks=[])
    callback_time = run_training_benchmark(callbacks=[Eco2AICallback()])
    overhead_percent = ((callback_time - baseline_time) / baseline_time) * 100
    return {"overhead_percent": overhead_percent}
