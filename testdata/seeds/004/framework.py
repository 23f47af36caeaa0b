"""The seed's framework module, cut to what the benchmarks import."""
from abc import ABC, abstractmethod


class TimingResult:
    def __init__(self, latency, tokens_per_second):
        self.latency = latency
        self.tokens_per_second = tokens_per_second


class ModelBenchmark(ABC):
    def __init__(self, logger):
        self.logger = logger

    @abstractmethod
    def setup_model(self, config):
        ...

    @abstractmethod
    def measure_latency(self, config):
        ...


class BenchmarkRunner:
    def __init__(self, logger, output_dir):
        self.output_dir = output_dir
