"""profiling runs an adapter's calls under its ecosystem's profiler, apart from the measured
iterations (the "profile" op): torch.profiler's Chrome trace (viewable in Perfetto) for torch
adapters, cProfile's .prof (snakeviz, pstats) for the others. Then the same number of calls again
for memory: the Python lines that allocated most, from tracemalloc (memory_top.txt), and on CUDA
the allocator's memory history snapshot (cuda_memory.pickle, for pytorch.org/memory_viz)."""

import cProfile
import json
import linecache
import os
import sys
import tracemalloc

from .common import Recorder

TORCH_ADAPTERS = ("torch_vision", "torch_llm")


def profile(adapter, adapter_name, n, out_dir):
    """profile runs n calls of adapter under a time profiler, then n under the memory ones, and
    returns the files written."""
    files = time_profile(adapter, adapter_name, n, out_dir)
    files += memory_profile(adapter, n, out_dir)
    return files


def memory_profile(adapter, n, out_dir, top=25):
    """memory_profile runs n calls under tracemalloc and writes the lines that allocated most
    (memory_top.txt: size, count and file:line with its source, largest first); on CUDA it also
    records the caching allocator's history over the same calls (cuda_memory.pickle). The calls
    are apart from the time profile's: tracemalloc slows every allocation."""
    files = []
    torch = sys.modules.get("torch")
    cuda = False
    if torch is not None and torch.cuda.is_available() and hasattr(torch.cuda.memory, "_record_memory_history"):
        try:
            torch.cuda.memory._record_memory_history(max_entries=100000)
            cuda = True
        except Exception:  # an older torch's signature: no snapshot, the rest goes on
            cuda = False
    # What a call allocates is mostly freed when it returns, so a snapshot after the calls would
    # show little: the snapshot kept is the one taken when a Python function returned with the
    # most memory held (its locals still alive), retaken each time that grows by a tenth.
    best = {"held": 0, "snap": None}

    def on_return(frame, event, arg):
        if event != "return":
            return
        held = tracemalloc.get_traced_memory()[0]
        if held > best["held"] * 1.1 + 4096:
            best["held"], best["snap"] = held, tracemalloc.take_snapshot()

    tracemalloc.start(10)
    try:
        sys.setprofile(on_return)
        try:
            adapter.run(n, Recorder(), False)
        finally:
            sys.setprofile(None)
        current, peak = tracemalloc.get_traced_memory()
        snap = best["snap"] if best["snap"] is not None and best["held"] > current else tracemalloc.take_snapshot()
        held = max(best["held"], current)
    finally:
        tracemalloc.stop()
        if cuda:
            path = os.path.join(out_dir, "cuda_memory.pickle")
            try:
                torch.cuda.memory._dump_snapshot(path)
                files.append(path)
            finally:
                torch.cuda.memory._record_memory_history(enabled=None)
    here = os.path.dirname(os.path.abspath(__file__))
    snap = snap.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__),
                               tracemalloc.Filter(False, "<frozen importlib._bootstrap*>"),
                               tracemalloc.Filter(False, os.path.join(here, "*"))])
    stats = snap.statistics("lineno")
    path = os.path.join(out_dir, "memory_top.txt")
    with open(path, "w") as f:
        f.write("# %d calls under tracemalloc: the lines whose allocations were held when the most\n"
                "# memory was (%.1f KiB, as a function returned); traced peak %.1f KiB, held at the\n"
                "# end %.1f KiB. The worker's own frames are left out.\n" % (n, held / 1024, peak / 1024, current / 1024))
        f.write("%12s %8s  %s\n" % ("KiB", "blocks", "file:line"))
        for st in stats[:top]:
            fr = st.traceback[0]
            src = linecache.getline(fr.filename, fr.lineno).strip()
            f.write("%12.1f %8d  %s:%d  %s\n" % (st.size / 1024, st.count, fr.filename, fr.lineno, src))
    files.append(path)
    return files


def time_profile(adapter, adapter_name, n, out_dir):
    """time_profile runs n calls of adapter under a profiler and returns the files written."""
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
