import time
from src.inference_pio.test_utils import assert_true


def perform_operation():
    return sorted((i * 7919) % 10007 for i in range(2000))


def run_basic_performance_benchmark():
    """A basic performance benchmark example."""
    start_time = time.time()
    result = perform_operation()
    execution_time = time.time() - start_time
    assert_true(result is not None, "Operation should return a result")
    print(f"Execution time: {execution_time:.4f} seconds")
    return {'execution_time': execution_time, 'result_size': len(result)}
