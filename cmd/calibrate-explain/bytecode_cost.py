"""bytecode_cost.py times one call of the synthetic Python program plain and with its bytecode
counted (inferbench_worker.bytecode), what a counted worker adds for bytecode.json. Run from the
repository root, plain and under callgrind:

    PYTHONPATH=internal/workers/python .venv/bin/python cmd/calibrate-explain/bytecode_cost.py
    PYTHONPATH=internal/workers/python valgrind --tool=callgrind -q --callgrind-out-file=/dev/null \
        .venv/bin/python cmd/calibrate-explain/bytecode_cost.py
"""
import time

from inferbench_worker import bytecode


def _make(i):
    src = "def f%02d(w):\n    s = 0\n    for k in range(w):\n        s += k * k %% 7\n    return s\n" % i
    ns = {}
    exec(compile(src, "synthetic.py", "exec"), ns)
    return ns["f%02d" % i]


# The synthetic program of driver.py: twenty functions of 2,000 iterations, 440k bytecode
# instructions a call.
FUNCS = [_make(i) for i in range(20)]


def bench():
    for f in FUNCS:
        f(2000)


bench()
t = time.perf_counter()
bench()
plain = time.perf_counter() - t
t = time.perf_counter()
bytecode.count(bench)
traced = time.perf_counter() - t
print("call %.3f s, counted call %.3f s (%.0fx)" % (plain, traced, traced / plain))
