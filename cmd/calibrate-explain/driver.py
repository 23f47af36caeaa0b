"""driver.py is calibrate-explain's Python side: it profiles the synthetic Python program and the
small torch model through the worker's own profile pass (inferbench_worker.profiling), one job per
line of stdin: {"kind": "python"|"torch", "inject": INDEX or -1, "by": 0.1, "dir": DIR, "n": N}
("by": how much costlier the injected function or operator is; for python, "edit" and "rename":
how the file was edited besides, see program). With "measure": "instructions"
a python job counts one call's bytecode instructions per function instead, as a counted worker
does (inferbench_worker.bytecode, after one call uncounted), and a torch job counts each operator's
instructions in 3 calls, as a counted worker's operator pass does (inferbench_worker.operators,
operators.json): the driver then runs under callgrind, started uninstrumented as a counted
worker is, and the model's shapes are an eighth of the timed ones in each dimension (under
callgrind an operator of the timed shapes takes a third of a second). It answers each job with
one line {"files": [...]} (or {"error": ...}) on stdout."""

import json
import os
import sys

from inferbench_worker import bytecode, operators, profiling

# The synthetic Python program: twenty functions of the same cost, each a loop of its own (its
# own time, not a shared helper's), called once per call of the benchmark, defined in one file.
WORK = [2000] * 20
INJECT = 1.10

# An edit of the file between two profiles, beside the injected cost (job "edit"): "moved" puts
# three new lines above and the functions in reverse order (every function's line changes),
# "renamed" gives function job["rename"] another name. Neither changes what a call costs.
BODY = "def %s(w):\n    s = 0\n    for k in range(w):\n        s += k * k %% 7\n    return s\n\n"


def program(edit="", rename=-1):
    """program returns the twenty functions, in call order, of synthetic.py as edit leaves it."""
    names = ["g%02d" % i if edit == "renamed" and i == rename else "f%02d" % i for i in range(20)]
    order = list(range(20))
    src = ""
    if edit == "moved":
        order.reverse()
        src = "# an edit above\n# moves every function below\n\n"
    for i in order:
        src += BODY % names[i]
    ns = {}
    exec(compile(src, "synthetic.py", "exec"), ns)
    return [ns[n] for n in names]


def bench(funcs, work):
    for f, w in zip(funcs, work):
        f(w)


class Adapter:
    """Adapter is shaped like a worker adapter: run(n, recorder, warmup) makes n calls."""

    def __init__(self, call):
        self.call = call

    def run(self, n, rec, warmup):
        call = self.call
        for _ in range(n):
            call()


def torch_model(scale=1):
    """torch_model returns twelve operators without children in the profile, each keyed by its
    name and input shapes (three matrix products of different shapes are three entries), each
    run REPS times per call; scale divides every dimension."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    # Shapes large enough that an operator takes about a millisecond: the profiler's cost is
    # per event, and a chunk of microsecond operators would be hundreds of thousands of them.
    d = lambda n: n // scale
    x = torch.randn(d(256), d(512))
    w1, w2, w3 = torch.randn(d(512), d(512)), torch.randn(d(512), d(1024)), torch.randn(d(512), d(256))
    y = torch.randn(d(512), d(1024))
    ops = [
        lambda: torch.mm(x, w1),
        lambda: torch.mm(x, w2),
        lambda: torch.mm(x, w3),
        lambda: torch.tanh(y),
        lambda: torch.sigmoid(y),
        lambda: torch.exp(y),
        lambda: torch.mul(y, y),
        lambda: torch.add(y, y),
        lambda: torch.sin(y),
        lambda: torch.cos(y),
        lambda: torch.abs(y),
        lambda: torch.neg(y),
    ]
    return ops


REPS = 10

# COUNTED_SCALE divides the torch model's dimensions in instruction mode.
COUNTED_SCALE = 8


def main():
    ops = None
    counter = None  # callgrind's client requests, for the torch model in instruction mode
    for line in sys.stdin:
        job = json.loads(line)
        try:
            os.makedirs(job["dir"], exist_ok=True)
            inj = job["inject"]
            if job["kind"] == "python":
                by = 1 + job.get("by", INJECT - 1)
                work = [int(w * by) if i == inj else w for i, w in enumerate(WORK)]
                funcs = program(job.get("edit", ""), job.get("rename", -1))
                adapter = Adapter(lambda: bench(funcs, work))
                if job.get("measure") == "instructions":
                    adapter.run(1, None, True)
                    files = [bytecode.profile(lambda: adapter.run(1, None, False), job["dir"])]
                else:
                    files = profiling.time_profile(adapter, "pyfunc", job["n"], job["dir"])
            else:
                counted = job.get("measure") == "instructions"
                if ops is None:
                    ops = torch_model(COUNTED_SCALE if counted else 1)
                import torch

                # +10% of an operator: 11 runs of it in a call instead of 10
                extra = round(REPS * job.get("by", 0.1))
                reps = [REPS + extra if i == inj else REPS for i in range(len(ops))]

                def call():
                    with torch.no_grad():
                        for op, r in zip(ops, reps):
                            for _ in range(r):
                                op()

                if counted:
                    if counter is None:
                        from inferbench_worker import callgrind

                        counter = callgrind.Counter()
                        operators.prepare(call)  # before instrumentation, as the worker does
                        counter.instrument()
                    files = [operators.profile(call, counter, job["dir"])]
                else:
                    files = profiling.time_profile(Adapter(call), "torch_vision", job["n"], job["dir"])
            print(json.dumps({"files": files}), flush=True)
        except Exception as e:  # the Go side reports it with the job
            print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}), flush=True)


if __name__ == "__main__":
    main()
