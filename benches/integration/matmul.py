"""A small CPU workload for the exec example: multiplies two n x n matrices in pure Python and
prints its own timing as JSON on the last line of stdout."""
import argparse
import json
import random
import time

p = argparse.ArgumentParser()
p.add_argument("--n", type=int, default=32)
n = p.parse_args().n
rng = random.Random(n)
a = [[rng.random() for _ in range(n)] for _ in range(n)]
b = [[rng.random() for _ in range(n)] for _ in range(n)]
t0 = time.perf_counter()
c = [[sum(a[i][k] * b[k][j] for k in range(n)) for j in range(n)] for i in range(n)]
elapsed = time.perf_counter() - t0
print(json.dumps({"latency_ms": elapsed * 1e3, "flops": 2 * n ** 3 / elapsed}))
