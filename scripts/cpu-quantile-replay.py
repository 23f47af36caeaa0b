"""Replay a calibrate-gate workspace's runs, judging cpu_ms by other statistics than its median.

    python3 scripts/cpu-quantile-replay.py WORK KIND...   (WORK: calibrate-gate -work, -keep)

For each kind's chain of runs (10 history runs, then A S A A S A ...; docs/measurements/verdicts.md), each
statistic of a run's cpu_ms samples (median, p25, p10, min) is held to compare.NoiseOf's threshold
over the A runs before it (the newest 50): an A/A comparison fails, or a slowdown is found, when
the statistic's change exceeds it. No significance test: an upper bound on both rates.
"""

import glob
import json
import math
import statistics as st
import sys


def threshold(c):
    d = sorted(math.log(c[i] / c[i - 1]) for i in range(1, len(c)))
    med = st.median(d)
    dev = sorted(abs(x - med) for x in d)
    m = len(dev)
    out = min(m - 1, max(1, 2 * ((m + 1) // 15)))
    b = max(2.576 * 1.4826 * st.median(dev), dev[m - 1 - out])
    return max(1, math.ceil(10 * 1.5 * 100 * (math.exp(b) - 1)) / 10)


def q(xs, p):
    xs = sorted(xs)
    return xs[int(p * (len(xs) - 1))]


def main(work, kinds):
    for k in kinds:
        runs = [json.load(open(f))["scenarios"][0]["metrics"]["cpu_ms"]["samples"]
                for f in sorted(glob.glob("%s/%s/results/2*/run.json" % (work, k)))]
        order = ["A"] * 11
        while len(order) < len(runs):
            order += ["S", "A", "A"]
        order = order[:len(runs)]
        for name, f in (("median", lambda x: q(x, .5)), ("p25", lambda x: q(x, .25)),
                        ("p10", lambda x: q(x, .1)), ("min", min)):
            hist, aa, aaf, sl, slf, prev, slowed = [], 0, 0, 0, 0, None, None
            for i, (kind, x) in enumerate(zip(order, runs)):
                v = f(x)
                if kind == "S":
                    slowed = v
                    sl += 1
                    slf += 100 * (v / prev - 1) > threshold(hist[-50:])
                    continue
                if i >= 11:
                    t = threshold(hist[-50:])
                    aa += 1
                    aaf += 100 * (v / prev - 1) > t
                    if order[i - 1] == "S":
                        sl += 1
                        slf += 100 * (slowed / v - 1) > t
                hist.append(v)
                prev = v
            print("%s %s: A/A %d of %d over the threshold, slowdowns %d of %d" % (k, name, aaf, aa, slf, sl))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
