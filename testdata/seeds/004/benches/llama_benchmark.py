import time

from framework import BenchmarkRunner, ModelBenchmark, TimingResult

# Seconds per token of each variant: the stand-in model is faster compiled.
PER_TOKEN = {"eager": 0.0004, "compiled": 0.0002, "kernelized": 0.0001}


class LlamaBenchmark(ModelBenchmark):
    """A stand-in decoder: sleeps per token, faster compiled."""

    def setup_model(self, config):
        self.variant = config.variant
        self.tokens = config.max_new_tokens or 20
        self.model_id = config.model_id
        self.logger.info("model %s variant %s, %d tokens", self.model_id, self.variant, self.tokens)

    def measure_time_to_first_token(self, config):
        start = time.perf_counter()
        time.sleep(PER_TOKEN[self.variant])
        return time.perf_counter() - start

    def measure_latency(self, config):
        start = time.perf_counter()
        time.sleep(PER_TOKEN[self.variant] * self.tokens)
        latency = time.perf_counter() - start
        return TimingResult(latency=latency, tokens_per_second=self.tokens / latency)

    def cleanup_model(self):
        self.logger.info("cleaned up")


def run_llama_benchmark(logger, output_dir="benchmark_results", **kwargs):
    """Entry point of the seed's own runner: it names the class, so it is not a benchmark."""
    runner = BenchmarkRunner(logger, output_dir)
    return LlamaBenchmark(logger), runner
