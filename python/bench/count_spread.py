#!/usr/bin/env python3
"""count_spread: how much instruction mode's counts move between sessions of unchanged code, and
what a 10% slowdown does to them (docs/python.md, "The gate, measured").

gate_rates.py's three tests are counted as the plugin counts them in --inferbench-measure
instructions (inferbench._counted: each round in a ctypes callback, callgrind toggled on and
dumped around it; 3 warm-up calls, iterations from one call's count, 9 rounds), each session
a separate process under callgrind, without pytest around it (pytest's own start-up under
valgrind takes half a minute or more on a loaded machine). Sessions alternate between the
unchanged code and code whose ~350 us and ~40 us loops run 10% more iterations. The report is each
test's median instructions per call in each session, against the first unchanged session, and
what compare's count gate (threshold 0.5%) would say of each pair.

    python3 python/bench/count_spread.py -n 6
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ONE = r'''
import json, math, os, sys, time
from pathlib import Path
from inferbench import _counted
SLOW = os.environ.get("GATE_SLOW") == "1"
def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
MID = int(10000 * (1.1 if SLOW else 1))
PED = int(1250 * (1.1 if SLOW else 1))
counter = _counted.Counter(Path(os.environ[_counted.ENV]))
out = {}
for name, fn, args in (("mid", work, (MID,)), ("tiny", lambda: 3 * 7, ()), ("ped", work, (PED,))):
    for _ in range(3):
        fn(*args)
    n = 1 if name == "ped" else _counted.iterations_for(counter, lambda: fn(*args))
    def calls():
        for _ in range(n):
            fn(*args)
    out[name] = [counter.count(calls)["Ir"] / n for _ in range(_counted.ROUNDS)]
print(json.dumps(out))
'''


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=6, help="sessions (alternately unchanged and slowed)")
    a = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from inferbench import _counted

    valgrind, version = _counted.find_valgrind()
    load0 = open("/proc/loadavg").read().split()[:3]
    t0 = time.time()
    sessions = []
    with tempfile.TemporaryDirectory(prefix="count-spread-") as tmp:
        script = Path(tmp) / "one.py"
        script.write_text(ONE)
        for i in range(a.n):
            slow = i % 2 == 1
            out = Path(tmp) / f"cg{i}"
            out.mkdir()
            env = _counted.environ(out, version)
            env["GATE_SLOW"] = "1" if slow else "0"
            env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1] / "src"), env.get("PYTHONPATH", "")])
            argv = _counted.argv(valgrind, out)
            argv = argv[: argv.index("--") + 1] + [sys.executable, str(script)]
            p = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
            if p.returncode != 0:
                print(p.stderr[-2000:], file=sys.stderr)
                return 1
            counts = json.loads(p.stdout.strip().splitlines()[-1])
            sessions.append({"slowed": slow, "median": {k: statistics.median(v) for k, v in counts.items()},
                             "spread_pct": {k: 100 * (max(v) / min(v) - 1) for k, v in counts.items()}})
            print(f"session {i} ({'slowed' if slow else 'unchanged'}): {sessions[-1]['median']}", file=sys.stderr, flush=True)
    base = sessions[0]["median"]
    rows = []
    for i, s in enumerate(sessions[1:], 1):
        d = {k: 100 * (s["median"][k] / base[k] - 1) for k in base}
        rows.append({"session": i, "slowed": s["slowed"], "delta_pct": d,
                     "gate_fails": any(v > _THRESHOLD for v in d.values())})
    load1 = open("/proc/loadavg").read().split()[:3]
    same = [r for r in rows if not r["slowed"]]
    slow = [r for r in rows if r["slowed"]]
    worst_same = max((abs(v) for r in same for v in r["delta_pct"].values()), default=math.nan)
    slowed_moved = [r["delta_pct"][k] for r in slow for k in ("mid", "ped")]
    print(f"unchanged sessions beyond the 0.5% count threshold: {sum(r['gate_fails'] for r in same)} of {len(same)} "
          f"(largest change of a test's median {worst_same:.4f}%); slowed sessions beyond it: {sum(r['gate_fails'] for r in slow)} of {len(slow)} "
          f"(the slowed tests moved {min(slowed_moved, default=math.nan):+.2f}% to {max(slowed_moved, default=math.nan):+.2f}%); "
          f"within a session the 9 rounds of a test spread by at most {max(v for s in sessions for v in s['spread_pct'].values()):.3f}%; "
          f"load average {' '.join(load0)} -> {' '.join(load1)}; {round((time.time() - t0) / 60, 1)} min")
    print(json.dumps({"sessions": sessions, "pairs": rows, "valgrind": version, "loadavg_start": load0, "loadavg_end": load1}))
    return 0


_THRESHOLD = 0.5  # compare's default threshold of instruction counts (compare.CountThreshold), percent

if __name__ == "__main__":
    sys.exit(main())
