import resource


def perform_memory_intensive_operation():
    return [0] * 200000


def run_memory_usage_benchmark():
    """Benchmark memory usage of a specific operation."""
    initial_memory = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = perform_memory_intensive_operation()
    final_memory = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {'initial_memory_mb': initial_memory, 'final_memory_mb': final_memory,
            'memory_used_mb': final_memory - initial_memory, 'result_size': len(result)}
