"""gen.py makes operators.json in old/ and new/: the worker's per-operator counts
(inferbench_worker/operators.py) of a small torch model, the new one running aten::tanh once more
a call (4 times instead of 3). Run under callgrind from the repository root, as a counted worker
runs:

    OMP_NUM_THREADS=1 INFERBENCH_WORKER_CALLGRIND_OUT=/tmp/op/cg.out PYTHONPATH=internal/workers/python \
      valgrind --tool=callgrind -q --instr-atstart=no --callgrind-out-file=/tmp/op/cg.out \
      .venv/bin/python internal/explain/testdata/operators/gen.py
"""

import os

import torch

from inferbench_worker import callgrind, operators

HERE = os.path.dirname(os.path.abspath(__file__))

torch.manual_seed(0)
X = torch.randn(8, 16)
W = torch.randn(16, 16)


def model(tanhs):
    def call():
        with torch.inference_mode():
            y = torch.mm(X, W)
            for _ in range(tanhs):
                y = torch.tanh(y)
            return torch.relu(y).sum()
    return call


c = callgrind.Counter()
operators.prepare(model(3))
c.instrument()
for tag, n in (("old", 3), ("new", 4)):
    operators.profile(model(n), c, os.path.join(HERE, tag))
