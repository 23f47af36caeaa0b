import time


def process_data_of_size(size):
    return sum(i * i for i in range(size))


def run_scalability_benchmark():
    """Benchmark performance with varying input sizes."""
    results = {}
    for size in [100, 1000]:
        start_time = time.time()
        process_data_of_size(size)
        execution_time = time.time() - start_time
        results[f'size_{size}'] = {
            'time': execution_time,
            'throughput': size / execution_time if execution_time > 0 else 0.0,
        }
    return results
