"""gen.py writes old/bytecode.json and new/bytecode.json with the worker's bytecode counter
(inferbench_worker/bytecode.py): grow's loop runs 1000 times in old, 1100 in new.

    cd explain/testdata && PYTHONPATH=../../internal/workers/python python3 bytecode/gen.py
"""

import os
import sys

from inferbench_worker import bytecode


def leaf(n):
    s = 0
    for k in range(n):
        s += k * k % 7
    return s


def grow(n):
    s = 0
    for k in range(n):
        s += k * k % 7
    return s


def bench(n):
    return leaf(1000) + leaf(500) + grow(n)


here = os.path.dirname(os.path.abspath(__file__))
for side, n in (("old", 1000), ("new", 1100)):
    bytecode.profile(lambda: bench(n), os.path.join(here, side))
