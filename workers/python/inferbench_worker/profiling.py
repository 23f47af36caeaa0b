"""profiling runs an adapter's calls under its ecosystem's profiler, apart from the measured
iterations (the "profile" op): torch.profiler's Chrome trace (viewable in Perfetto) for torch
adapters, cProfile's .prof (snakeviz, pstats) for the others."""

import cProfile
import os

from .common import Recorder

TORCH_ADAPTERS = ("torch_vision", "torch_llm")


def profile(adapter, adapter_name, n, out_dir):
    """profile runs n calls of adapter under a profiler and returns the files written."""
    os.makedirs(out_dir, exist_ok=True)
    files = []
    if adapter_name in TORCH_ADAPTERS:
        import torch
        from torch.profiler import ProfilerActivity, profile as tprofile

        acts = [ProfilerActivity.CPU]
        if torch.cuda.is_available():
            acts.append(ProfilerActivity.CUDA)
        with tprofile(activities=acts, record_shapes=True) as prof:
            adapter.run(n, Recorder(), False)
        path = os.path.join(out_dir, "torch_trace.json")
        prof.export_chrome_trace(path)
        files.append(path)
        return files
    prof = cProfile.Profile()
    prof.enable()
    try:
        adapter.run(n, Recorder(), False)
    finally:
        prof.disable()
    path = os.path.join(out_dir, "python.prof")
    prof.dump_stats(path)
    files.append(path)
    return files
