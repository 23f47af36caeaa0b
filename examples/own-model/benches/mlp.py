import torch


class MLPBenchmark:
    """A 3-layer MLP of our own, random weights, on CPU."""

    def setup_model(self, config):
        torch.manual_seed(0)
        layers = [torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)]
        self.model = torch.nn.Sequential(*layers).eval()
        if config.variant == "compiled":
            self.model = torch.compile(self.model)
        self.x = torch.randn(config.batch_size, 256)
        with torch.inference_mode():
            self.model(self.x)  # the first call (and a compile) before any iteration

    def measure_latency(self, config):
        with torch.inference_mode():
            self.model(self.x)
