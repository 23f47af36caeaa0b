"""Seed-style Python benchmarks: inferbench finds run_* / benchmark_* functions and classes with
setup_model / measure_latency in .py files under benches/ and runs them in a worker process.
Each call is one iteration; numbers in a returned dict are recorded as metrics."""

import time


def run_sort_benchmark(size=20000):
    """Sort a list of pseudo-random integers."""
    data = [(i * 7919) % 10007 for i in range(int(size))]
    start = time.perf_counter()
    data.sort()
    return {"execution_time": time.perf_counter() - start, "result_size": len(data)}


def benchmark_json_roundtrip():
    """Encode and decode a small nested document."""
    import json

    doc = {"items": [{"id": i, "name": "item-%d" % i, "tags": ["a", "b"]} for i in range(200)]}
    return len(json.loads(json.dumps(doc))["items"])


class TimingResult:
    def __init__(self, latency, tokens_per_second):
        self.latency = latency
        self.tokens_per_second = tokens_per_second


class EchoModelBenchmark:
    """A stand-in model with the setup_model / measure_latency shape of ModelBenchmark classes."""

    def __init__(self, logger):
        self.logger = logger

    def setup_model(self, config):
        self.tokens = config.max_new_tokens or 16
        self.logger.info("set up for %s tokens, variant %s", self.tokens, config.variant)

    def measure_time_to_first_token(self, config):
        start = time.perf_counter()
        sum(range(2000))
        return time.perf_counter() - start

    def measure_latency(self, config):
        start = time.perf_counter()
        for _ in range(self.tokens):
            sum(range(2000))
        lat = time.perf_counter() - start
        return TimingResult(latency=lat, tokens_per_second=self.tokens / lat)

    def cleanup_model(self):
        self.logger.info("cleaned up")
