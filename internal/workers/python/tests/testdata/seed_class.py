"""A seed-style model benchmark class (used by the tests)."""

import time


class TimingResult:
    def __init__(self, latency, tokens_per_second):
        self.latency = latency
        self.tokens_per_second = tokens_per_second


class ModelBenchmark:
    def setup_model(self, config):
        raise NotImplementedError

    def measure_latency(self, config):
        raise NotImplementedError


class TinyModelBenchmark(ModelBenchmark):
    def __init__(self, logger):
        self.logger = logger
        self.ready = False
        self.cleaned = False

    def setup_model(self, config):
        self.variant = config.variant
        self.tokens = config.max_new_tokens or 8
        self.ready = True

    def cleanup_model(self):
        self.cleaned = True
        print("cleaned up")

    def measure_time_to_first_token(self, config):
        return 0.002

    def measure_latency(self, config):
        assert self.ready
        t = time.perf_counter()
        time.sleep(0.001)
        lat = time.perf_counter() - t
        return TimingResult(latency=lat, tokens_per_second=self.tokens / lat)


def run_tiny_model_benchmark(logger, output_dir="benchmark_results", **kwargs):
    """The entry point of the seed's own runner: never called by inferbench."""
    benchmark = TinyModelBenchmark(logger)
    raise RuntimeError("not run: %r" % benchmark)


def benchmark_kept():
    return 1
