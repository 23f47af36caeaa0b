"""Per-operator instruction counts of a torch model in instruction mode (operators.json, which
explain compares for torch scenarios).

Callgrind's files of a counted call name the C++ functions under an operator (at::native::...,
the BLAS's kernels), not the operator with its input shapes that explain's torch entries are.
This module makes a separate pass after the counted calls: a TorchDispatchMode sees every aten
operator the call runs (below autograd: under torch.inference_mode a composite operator such as
aten::linear arrives whole, with autograd's key on, under no_grad, as the operators it is made
of, aten::t and aten::addmm), and brackets each with callgrind's client requests, zero before
and dump after; the dump's totals are that operator call's instructions, on every thread.
Inside the mode's handler the mode is off, so an operator's own calls of other operators count in
it: the entries do not nest, and their sum is the work of the operators. The Python code between
them is in no entry: bytecode.json counts it, and explain compares it beside the operators.

Each operator is keyed as torch.profiler's entries are: its name and input shapes,
"aten::addmm [64, 8×64, 64×64]". The pass counts CHUNKS calls, each a chunk of explain's: a count
that varies between them (the allocator's state, a thread's wait) is tested, the steady ones are
exact.

Threads: the harness runs a counted worker with one OpenMP thread (OMP_NUM_THREADS=1 unless
the definition's env sets it; counted.go), and the pass keeps the worker's threads. An intra-op
pool's threads wait for work by spinning, and valgrind runs one thread at a time, so a spin
executes as many instructions as the scheduler lets it before the thread holding the work runs:
the counts would change from call to call. Changing the threads for the pass alone would not
do: torch sets its pool up again at the next call, which counted 4 to 9 times its instructions
here. With one thread the counts say the work of an operator, not how it was split between
threads.

Each count includes the requests' own round trip (the ctypes calls and the Python of the
handler between the two requests, the same in every run) and torch's dispatch of the operator:
for a small operator most of its count (an 8×16 aten::relu counts 14k instructions).
"""

import gc
import json
import os
import sys

from .profiling import shapes_text

# CHUNKS is how many calls the pass counts, each a chunk.
CHUNKS = 3

# LIMIT is the most operator calls a call may run for the pass to count it, unless LIMIT_ENV sets
# another: each operator call is a dump of callgrind's, about 30 ms with its reading, made 4 times
# (the warm-up and the chunks), so 2,000 are about 4 minutes. A model's forward is a few hundred
# (a ResNet-50's about 230); an LLM's generate loop, hundreds a token, is passed over (its
# bytecode.json and callgrind files stay) rather than adding hours to the run.
LIMIT = 2000
LIMIT_ENV = "INFERBENCH_OPERATOR_LIMIT"

# WARMUP is how many calls the pass makes, each operator in its window, before the calls it
# counts: in a process that has made few dumps, the first chunks counted more (a small operator's
# 16k instructions 3 to 8% more in the first chunk than the third).
WARMUP = 1


class TooMany(Exception):
    """TooMany: the call runs more operator calls than the pass counts (LIMIT)."""


# _prepared is how many operator calls prepare's call ran (None before it).
_prepared = None


def limit():
    """limit is LIMIT, or the whole number LIMIT_ENV gives."""
    v = os.environ.get(LIMIT_ENV, "").strip()
    if not v:
        return LIMIT
    try:
        n = int(v)
    except ValueError:
        raise ValueError("%s=%r is not a whole number of operator calls" % (LIMIT_ENV, v))
    if n < 1:
        raise ValueError("%s=%r: give a positive number of operator calls" % (LIMIT_ENV, v))
    return n


def _check(calls):
    n = limit()
    if calls > n:
        raise TooMany("the call ran %d torch operator calls, more than the %d the operator pass "
                      "counts (each a callgrind dump, about 30 ms, 4 times); set %s to count more"
                      % (calls, n, LIMIT_ENV))


def _shapes(args, kwargs):
    """_shapes lists the shapes of an operator's tensor inputs in order, those in a list
    (aten::cat's) in place."""
    torch = sys.modules["torch"]
    out = []

    def add(a):
        if isinstance(a, torch.Tensor):
            out.append(list(a.shape))
        elif isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, torch.Tensor):
                    out.append(list(b.shape))

    for a in args:
        add(a)
    for a in (kwargs or {}).values():
        add(a)
    return out


def key(func, args, kwargs):
    """key names an operator call as explain's torch entries are named: "aten::mm [8×64, 64×128]"
    (no shapes when no input is a tensor of at least one dimension)."""
    schema = getattr(func, "_schema", None)
    name = schema.name if schema is not None else str(func)
    sh = shapes_text(_shapes(args, kwargs))
    return name + " " + sh if sh else name


def _mode(window, entries):
    import torch  # noqa: F401
    from torch.utils._python_dispatch import TorchDispatchMode

    class Counts(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            k = key(func, args, kwargs)
            window.zero()
            out = func(*args, **kwargs)
            n = window.dump()
            e = entries.get(k)
            if e is None:
                e = entries[k] = {"name": k, "count": 0, "self": 0, "incl": 0}
            e["count"] += 1
            e["self"] += n
            e["incl"] += n
            return out

    return Counts()


class _Null:
    """_Null is a window that counts nothing: the warm-up call's."""

    def zero(self):
        pass

    def dump(self):
        return 0


def count(call, window, chunks=CHUNKS):
    """count runs call() WARMUP times to warm up, then chunks times with each operator bracketed by
    window's zero() and dump() (dump returns the instructions since the zero), and returns
    explain's chunks, one a call. The warm-up calls run as the counted ones do, under the mode,
    counting nothing: the first chunk is then like the others. The garbage is collected once
    before the counted calls and the collector is off during them, so that no collection falls
    into an operator's window (a collection with torch loaded takes seconds under valgrind; one a
    chunk would double the pass). The threads are the worker's (module comment)."""
    enabled = gc.isenabled()
    out = []
    global _prepared
    if _prepared is not None:
        calls, _prepared = _prepared, None  # the next scenario's call may differ
        _check(calls)  # before any dump: prepare's call, uninstrumented, counted them
    try:
        # The warm-up calls make the windows the counted ones do (their counts dropped):
        # reading and removing each dump file allocates, and until the allocator has settled
        # the operators' own allocations take longer paths.
        seen = {}
        for _ in range(WARMUP):
            with _mode(window, seen):
                call()
        if not seen:
            return out  # no operator: a Python function that imported torch and did not use it
        _check(sum(e["count"] for e in seen.values()))
        gc.collect()
        gc.disable()
        for _ in range(chunks):
            entries = {}
            with _mode(window, entries):
                call()
            out.append({"calls": 1, "entries": list(entries.values()),
                        "stacks": {e["name"].replace(";", ","): e["self"] for e in entries.values()}})
    finally:
        if enabled:
            gc.enable()
    return out


def prepare(call):
    """prepare runs call() once under the mode, counting nothing, before callgrind's
    instrumentation starts: the first call through a TorchDispatchMode fills torch's Python-side
    caches of each operator's dispatch, which instrumented took 95 s for a model of four
    operators here, uninstrumented a few. It counts the call's operator calls too, so that a call
    running more than the pass counts (limit()) makes no dump at all."""
    global _prepared
    seen = {}
    with _mode(_Null(), seen):
        call()
    _prepared = sum(e["count"] for e in seen.values())


def document(chunks):
    """document is operators.json: explain's chunks of source "operators", unit "Ir", exact."""
    return {"source": "operators", "unit": "Ir", "exact": True, "chunks": chunks}


def profile(call, window, out_dir, chunks=CHUNKS):
    """profile counts call() per operator and writes operators.json into out_dir; it returns the
    path, or None when the call ran no torch operator (a Python function that imported torch and
    did not use it: its bytecode.json says what it did)."""
    docs = count(call, window, chunks)
    if not any(c["entries"] for c in docs):
        return None
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "operators.json")
    with open(path, "w") as f:
        json.dump(document(docs), f, separators=(",", ":"))
    return path
