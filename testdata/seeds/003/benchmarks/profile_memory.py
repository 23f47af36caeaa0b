"""Run under memory_profiler or mprof in the seed; not a benchmark."""
if __name__ == "__main__":
    print(len([0] * 1000))
