"""profiling runs an adapter's calls under its ecosystem's profiler, apart from the measured
iterations (the "profile" op), in chunks that explain compares: torch.profiler's Chrome trace
(viewable in Perfetto) and per-operator chunks for torch adapters, cProfile's .prof (snakeviz,
pstats) and per-function chunks for the others. Then the same number of calls again
for memory: the Python lines that allocated most, from tracemalloc (memory_top.txt), and on CUDA
the allocator's memory history snapshot (cuda_memory.pickle, for pytorch.org/memory_viz)."""

import cProfile
import json
import linecache
import os
import pstats
import sys
import time
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


# The time profile is taken in CHUNKS independent chunks of calls, each of at least n/CHUNKS
# calls and CHUNK_SECONDS: explain (inferbench explain, and below a failed gate) compares each
# function's or operator's cost per call across the chunks of two runs, the spread across chunks
# being the noise a change must beat. Each chunk writes a small JSON (python-K.json, torch-K.json)
# of its entries; docs/worker-protocol.md describes it.
CHUNKS = 8
CHUNK_SECONDS = 0.25
# torch.profiler keeps every operator event of a session in memory, and turning them into
# Python events costs about 5 KiB and 0.1 ms each: a tiny model's calls (500 operators in 2 ms)
# made 0.25 s chunks hold 700,000 events, 7 GiB and 100 s of post-processing. So a torch session
# holds at most about TORCH_EVENTS events: each chunk's calls stop at its share of them, counted
# from one call profiled first.
TORCH_EVENTS = 100000


def run_chunk(adapter, n, most=None):
    """run_chunk runs one chunk's calls and returns how many: n/CHUNKS at least, and, doubling,
    as many as last CHUNK_SECONDS under the profiler, but no more than most when it is given
    (and n/CHUNKS asks for fewer)."""
    t0 = time.perf_counter()
    least = max(1, -(-n // CHUNKS))
    most = max(least, most or 10000000)
    done, batch = 0, least
    while True:
        adapter.run(batch, Recorder(), False)
        done += batch
        if time.perf_counter() - t0 >= CHUNK_SECONDS or done >= most:
            return done
        batch = min(done, most - done)


def torch_events_per_call(adapter, acts):
    """torch_events_per_call profiles one call of adapter in a session of its own and returns
    how many events the profiler recorded for it (at least 1)."""
    from torch.profiler import profile as tprofile

    with tprofile(activities=acts, record_shapes=True) as prof:
        adapter.run(1, Recorder(), False)
    return max(1, len(prof.events()))


def time_profile(adapter, adapter_name, n, out_dir):
    """time_profile runs CHUNKS chunks of calls of adapter under a profiler and returns the files
    written: torch.profiler's Chrome trace of the first chunk (torch_trace.json) and torch-K.json
    per chunk for torch adapters; cProfile's dump of all chunks (python.prof) and python-K.json
    per chunk for the others."""
    os.makedirs(out_dir, exist_ok=True)
    files = []
    if adapter_name in TORCH_ADAPTERS:
        import torch
        from torch.profiler import ProfilerActivity, profile as tprofile, record_function

        acts = [ProfilerActivity.CPU]
        if torch.cuda.is_available():
            acts.append(ProfilerActivity.CUDA)
        # One profiler session, each chunk under a marker of its own: a session's start and stop
        # cost more than a chunk of small calls.
        most = max(1, TORCH_EVENTS // CHUNKS // torch_events_per_call(adapter, acts))
        calls = []
        with tprofile(activities=acts, record_shapes=True) as prof:
            for k in range(1, CHUNKS + 1):
                with record_function(CHUNK_MARK % k):
                    calls.append(run_chunk(adapter, n, most))
        path = os.path.join(out_dir, "torch_trace.json")
        if torch.autograd.kineto_available():
            prof.export_chrome_trace(path)
        else:
            write_legacy_trace(prof.events(), path)
        files.append(path)
        for k, doc in enumerate(torch_chunks(prof.events(), calls), 1):
            path = os.path.join(out_dir, "torch-%d.json" % k)
            write_json(path, doc)
            files.append(path)
        return files
    stats = None
    chunks = []
    for k in range(1, CHUNKS + 1):
        # The process's CPU time, not the wall clock: a machine shared with other work (a CI
        # runner) would otherwise charge the time this process waited to whichever function
        # it waited in.
        prof = cProfile.Profile(time.process_time)
        prof.enable()
        try:
            calls = run_chunk(adapter, n)
        finally:
            prof.disable()
        st = pstats.Stats(prof)
        path = os.path.join(out_dir, "python-%d.json" % k)
        write_json(path, python_chunk(st, calls))
        chunks.append(path)
        if stats is None:
            stats = st
        else:
            stats.add(st)
    path = os.path.join(out_dir, "python.prof")
    stats.dump_stats(path)
    return [path] + chunks


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))


def python_name(key):
    """python_name names a cProfile entry as explain shows it: "function (file.py:12)", or the
    built-in's own name ("<built-in method time.sleep>")."""
    filename, line, func = key
    if filename == "~":
        return func
    return "%s (%s:%d)" % (func, os.path.basename(filename), line)


# The worker's own frames around the calls: explain's stacks start below them.
_HERE = os.path.dirname(os.path.abspath(__file__))


def python_chunk(st, calls):
    """python_chunk turns one chunk's cProfile stats into explain's chunk: per function its calls,
    own time (tottime) and time with callees (cumtime) in ms, and per caller edge the callee's
    cumtime along it."""
    entries, edges = [], []
    for key, (cc, nc, tt, ct, callers) in st.stats.items():
        if key[0].startswith(_HERE) or key[2] == "<method 'disable' of '_lsprof.Profiler' objects>":
            continue  # the worker's loop and the profiler's own stop
        name = python_name(key)
        entries.append({"name": name, "count": nc, "self": tt * 1000, "incl": ct * 1000})
        for ckey, cv in callers.items():
            if ckey[0].startswith(_HERE):
                continue
            edges.append({"caller": python_name(ckey), "callee": name, "incl": cv[3] * 1000})
    return {"source": "python", "unit": "ms", "calls": calls, "entries": entries, "edges": edges}


def shapes_text(shapes):
    """shapes_text writes an operator's input shapes as explain keys them: "[8×64, 64×128]" (the
    inputs without a shape, scalars and None, left out)."""
    parts = ["×".join(str(d) for d in s) for s in (shapes or []) if isinstance(s, (list, tuple)) and s]
    return "[%s]" % ", ".join(parts) if parts else ""


CHUNK_MARK = "inferbench_chunk_%d"


def torch_chunks(events, calls):
    """torch_chunks turns the profiler's events into explain's chunks, one per chunk marker: per
    operator and input shapes its calls, self CPU time and CPU time with children in ms; on CUDA
    the device time of each operator's kernels as an entry "cuda: OPERATOR [shapes]"; and the
    operators' call stacks (by name, below the marker) with their self CPU time."""
    chunks = [{"source": "torch", "unit": "ms", "calls": c, "entries": {}, "stacks": {}} for c in calls]
    marks = {CHUNK_MARK % (k + 1): k for k in range(len(calls))}
    for e in events:
        if e.name in marks:
            continue
        path, p, k = [], e, None
        while p is not None:
            if p.name in marks:
                k = marks[p.name]
                break
            path.append(p.name.replace(";", ","))
            p = p.cpu_parent
        if k is None:
            continue  # outside the chunks (a CUDA event is reached through its operator)
        c = chunks[k]
        name = e.name
        sh = shapes_text(getattr(e, "input_shapes", None))
        if sh:
            name += " " + sh
        ent = c["entries"].setdefault(name, {"name": name, "count": 0, "self": 0.0, "incl": 0.0})
        ent["count"] += 1
        ent["self"] += e.self_cpu_time_total / 1000
        ent["incl"] += e.cpu_time_total / 1000
        dev = getattr(e, "self_device_time_total", None)
        if dev is None:
            dev = getattr(e, "self_cuda_time_total", 0)
        if dev:
            d = c["entries"].setdefault("cuda: " + name, {"name": "cuda: " + name, "count": 0, "self": 0.0, "incl": 0.0})
            d["count"] += 1
            d["self"] += dev / 1000
            d["incl"] += dev / 1000
        key = ";".join(reversed(path))
        c["stacks"][key] = c["stacks"].get(key, 0) + e.self_cpu_time_total / 1000
    for c in chunks:
        c["entries"] = list(c["entries"].values())
    return chunks


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
