"""The reference for the agreement check of docs/performance.md: a plain PyTorch timing loop, as
people write by hand, over the same model, input and thread count as the resnet18-cpu benchmark
(benches/performance/vision.yaml). Prints the p50 in milliseconds.

    /usr/bin/python3 benchmarks/scripts/plain_torch_loop.py [--iterations 30] [--warmup 5]
"""

import argparse
import statistics
import time

import torch
import torchvision

p = argparse.ArgumentParser()
p.add_argument("--model", default="resnet18")
p.add_argument("--image-size", type=int, default=112)
p.add_argument("--batch-size", type=int, default=1)
p.add_argument("--threads", type=int, default=1)
p.add_argument("--warmup", type=int, default=5)
p.add_argument("--iterations", type=int, default=30)
a = p.parse_args()

torch.set_num_threads(a.threads)
torch.manual_seed(0)
model = torchvision.models.get_model(a.model, weights=None).eval()
x = torch.randn(a.batch_size, 3, a.image_size, a.image_size)
times = []
with torch.inference_mode():
    model(x)  # the first call (inferbench's setup makes two)
    model(x)
    for _ in range(a.warmup):
        model(x)
    for _ in range(a.iterations):
        t0 = time.perf_counter()
        model(x)
        times.append((time.perf_counter() - t0) * 1e3)
print("%.4f" % statistics.median(times))
