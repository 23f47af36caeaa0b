"""The worker's memory and time for a torch profile of a tiny LLM (docs/measurements/workers.md):
the calls of test_frameworks.py's test_torch_llm_trace through a real worker process, printing the
profile op's seconds, the files it wrote and the worker's VmHWM before and after.

Run from the repository root: .venv/bin/python scripts/torch-profile-memory.py
"""

import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "internal", "workers", "python", "tests"))

from test_worker import Worker  # noqa: E402


def hwm(w):
    with open("/proc/%d/status" % w.p.pid) as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1e6  # GB (kB / 1e6)
    return float("nan")


def main():
    w = Worker("torch_llm")
    try:
        w.call("setup", params={"backend": "torch", "vocab_size": 64, "hidden_size": 32, "num_layers": 1,
                                "num_heads": 2, "prompt_tokens": 4, "max_new_tokens": 3, "device": "cpu", "threads": 1})
        w.call("run", n=2)
        before = hwm(w)
        with tempfile.TemporaryDirectory() as d:
            t = time.perf_counter()
            files = w.call("profile", n=2, dir=d)["files"]
            secs = time.perf_counter() - t
            trace = os.path.getsize(files[0])
        print("profile op: %.1f s, torch_trace.json %.0f MB, %d files" % (secs, trace / 1e6, len(files)))
        print("worker VmHWM: %.2f GB before the profile, %.2f GB after" % (before, hwm(w)))
    finally:
        w.close()


if __name__ == "__main__":
    main()
