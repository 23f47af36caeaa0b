#!/usr/bin/env python3
"""cpu-spread: how much the CPU time of the same computation moves from one process to the next on
this machine, with nothing of inferbench in the way (docs/verdicts.md, "What this machine lets
time see"; the figures in docs/measurements/verdicts.md).

Each of N processes runs one computation once and prints its own CPU time (time.process_time
around the call, after one untimed call): summing squares in the interpreter (the calibration's
CPU-bound Python work), and SHA-256 of 8 MiB (C code in hashlib). Quiet, then with a busy loop
spinning on the other core. A gate comparing two runs' medians can only see a change well above
the spread between processes of unchanged code.

    python3 scripts/cpu-spread.py -n 40
"""

import argparse
import os
import statistics
import subprocess
import sys

WORK = {
    "python squares (1,000,000)": "def w():\n    s = 0\n    for i in range(1000000):\n        s += i * i\n",
    "sha256 of 8 MiB (hashlib)": "import hashlib\nb = bytes(8 << 20)\ndef w():\n    hashlib.sha256(b).digest()\n",
}
TIMED = "\nimport time\nw()\nt = time.process_time()\nw()\nprint(1000 * (time.process_time() - t))\n"


def spread(code, n):
    ms = []
    for _ in range(n):
        out = subprocess.run([sys.executable, "-S", "-c", code + TIMED], capture_output=True, text=True, check=True).stdout
        ms.append(float(out))
    ms.sort()
    med = statistics.median(ms)
    return ms, med


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=40, help="processes per computation and condition")
    a = ap.parse_args()
    print("| computation | condition | processes | CPU time min / median / max (ms) | max / min | middle 80% around the median | load average (start) |")
    print("|---|---|---|---|---|---|---|")
    for loaded in (False, True):
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if loaded else None
        try:
            for name, code in WORK.items():
                load = open("/proc/loadavg").read().split()[0]
                ms, med = spread(code, a.n)
                lo, hi = ms[len(ms) // 10], ms[len(ms) - 1 - len(ms) // 10]
                print("| %s | %s | %d | %.1f / %.1f / %.1f | %.2f | %+.0f%% to %+.0f%% | %s |" % (
                    name, "busy loop on the other core" if loaded else "quiet", a.n, ms[0], med, ms[-1],
                    ms[-1] / ms[0], 100 * (lo / med - 1), 100 * (hi / med - 1), load), flush=True)
        finally:
            if busy is not None:
                busy.kill()
    print("python %s, %d cores" % (sys.version.split()[0], os.cpu_count()))


if __name__ == "__main__":
    main()
