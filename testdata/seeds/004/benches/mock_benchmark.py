import time

from framework import ModelBenchmark, TimingResult


class MockBenchmark(ModelBenchmark):
    """Demonstrates the framework without ML dependencies: skipped unless --enable-mock."""

    def setup_model(self, config):
        self.tokens = config.max_new_tokens or 20

    def measure_latency(self, config):
        time.sleep(0.001)
        return TimingResult(latency=0.001, tokens_per_second=self.tokens / 0.001)
