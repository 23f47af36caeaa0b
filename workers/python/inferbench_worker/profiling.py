"""profiling runs an adapter's calls under its ecosystem's profiler, apart from the measured
iterations (the "profile" op): torch.profiler's Chrome trace (viewable in Perfetto) for torch
adapters, cProfile's .prof (snakeviz, pstats) for the others."""

import cProfile
import json
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
        if torch.autograd.kineto_available():
            prof.export_chrome_trace(path)
        else:
            write_legacy_trace(prof.events(), path)
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



def write_legacy_trace(events, path):
    """write_legacy_trace writes the Chrome trace of a torch built without Kineto (Debian's torch
    1.13) from its profiler's events, in the form torch 2.x writes: {"traceEvents": [...]}, each
    operator an "X" event with its input shapes under args "Input Dims". That torch's own
    export_chrome_trace writes a bare list with empty args, so the shapes record_shapes took were
    lost and the trace had another shape than every other torch_trace.json."""
    out = []
    for e in events:
        if e.trace_name is None:
            continue
        args = {"Input Dims": e.input_shapes} if any(e.input_shapes or []) else {}
        out.append({"name": e.trace_name, "ph": "X", "ts": e.time_range.start,
                    "dur": e.time_range.elapsed_us(), "tid": e.thread, "pid": "CPU functions",
                    "args": args})
    with open(path, "w") as f:
        json.dump({"traceEvents": out}, f)
