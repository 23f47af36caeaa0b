import tracemalloc


def benchmark_memory_usage():
    """Measure memory usage of carbon tracking."""
    tracemalloc.start()
    data = [bytes(1024) for _ in range(200)]
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"memory_overhead_mb": peak / (1024 * 1024), "items": len(data)}
