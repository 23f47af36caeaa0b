"""Per-function counts of one call in instruction mode: the Python bytecode instructions each
function executed (bytecode.json, which explain compares).

Callgrind counts the machine instructions of the interpreter's C functions: every Python function
runs in the same evaluation loop (CPython 3.11 calls Python from Python without a C frame), so its
files say how much the interpreter did, not in which Python function. Perf trampolines, which
would give each Python function a C symbol of its own, arrived in 3.12. This module counts, for
one extra call, the bytecode instructions each Python function executes: sys.settrace with
f_trace_opcodes reports every instruction a traced frame runs. The count of a function is the
same in every run of the same code (no sampling, no clock); what it does not see is the work of C
code it calls (a built-in, a numpy or torch operator counts as its one CALL instruction), which
the callgrind file of the same run holds by C function.

The traced call is slow (a Python callback per instruction), so it is made once, after the
counted calls of the run that keeps its callgrind file, outside callgrind's counted window.
"""

import json
import os
import sys

# The worker's own frames (the protocol loop, the adapters' call of the user's function) are left
# out: the entries start at the user's code.
_HERE = os.path.dirname(os.path.abspath(__file__))


def name(code):
    """name names a function as explain shows it: "qualified.name (file.py:12)"."""
    return "%s (%s:%d)" % (getattr(code, "co_qualname", code.co_name),
                           os.path.basename(code.co_filename), code.co_firstlineno)


def count(call):
    """count runs call() with every Python frame it enters traced, and returns the counts: per code
    object its calls, own instructions and instructions with callees, and per caller → callee
    the callee's instructions along that call. A recursive function's inner activations add to
    its own count and its calls, not again to its inclusive count."""
    n = [0]  # instructions executed so far
    stack = []  # per active traced frame: [code, n at entry, callees' inclusive]
    active = {}  # code -> activations on the stack
    calls, own, incl, edges = {}, {}, {}, {}

    def local(frame, event, arg):
        if event == "opcode":
            n[0] += 1
        elif event == "return":
            code, start, inner = stack.pop()
            total = n[0] - start
            own[code] = own.get(code, 0) + total - inner
            active[code] -= 1
            if stack:
                stack[-1][2] += total
            if active[code] == 0:
                incl[code] = incl.get(code, 0) + total
                if stack:
                    key = (stack[-1][0], code)
                    edges[key] = edges.get(key, 0) + total
        return local

    def on_call(frame, event, arg):
        if event != "call":
            return None
        frame.f_trace_opcodes = True
        code = frame.f_code
        stack.append([code, n[0], 0])
        active[code] = active.get(code, 0) + 1
        calls[code] = calls.get(code, 0) + 1
        return local

    old = sys.gettrace()
    sys.settrace(on_call)
    try:
        call()
    finally:
        sys.settrace(old)
    return calls, own, incl, edges


def chunk(counts, calls=1):
    """chunk turns count's result into explain's chunk (docs/worker-protocol.md): source
    "bytecode", unit "op", exact."""
    ncalls, own, incl, edges = counts
    entries, out_edges = [], []
    mine = lambda code: os.path.abspath(code.co_filename).startswith(_HERE + os.sep)
    for code, k in ncalls.items():
        if mine(code):
            continue
        entries.append({"name": name(code), "count": k, "self": own.get(code, 0),
                        "incl": incl.get(code, 0)})
    for (caller, callee), v in edges.items():
        if mine(caller) or mine(callee):
            continue
        out_edges.append({"caller": name(caller), "callee": name(callee), "incl": v})
    return {"source": "bytecode", "unit": "op", "exact": True, "calls": calls,
            "entries": entries, "edges": out_edges}


def profile(call, out_dir):
    """profile counts one call() and writes bytecode.json into out_dir; it returns the path."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "bytecode.json")
    doc = chunk(count(call))
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    return path
