#!/usr/bin/env python3
"""gate_rates: how often the pytest plugin's default gate fails unchanged code, and how often it
finds a 10% slowdown (docs/python.md, "The gate, measured").

A project of three CPU-bound tests in the issue's shape (a ~350 us loop, a ~100 ns expression, a
pedantic ~40 us loop) runs as a user runs it, one pytest session after another, with the plugin's
defaults. Each trial saves a session, then compares against that saved run an unchanged session
(a failure is a false failure) and a session in which one test is 10% slower (its loop runs 10%
more iterations; trials alternate between the 350 us and the 40 us test; a failure is a
detection). A busy loop spins on another core for the whole measurement, as a build beside the
tests would.

    python3 python/bench/gate_rates.py -n 100            # prints a markdown table and one JSON line

Instruction mode's sessions run under valgrind (about a minute each), so its rates are measured
from pairs instead: --pairs U,S saves U unchanged sessions and S slowed ones and compares every
unchanged pair (U(U-1)/2 comparisons: false failures) and every slowed session against every
unchanged one (S*U: detections) with `inferbench compare` and the thresholds the plugin's compare
uses (a count moves with the code, not with the machine: a pair stands for a session against its
saved run):

    python3 python/bench/gate_rates.py --pairs 15,7 -- --inferbench-measure instructions

The plugin and binary are the ones the interpreter finds (an installed wheel, or
PYTHONPATH=$PWD/python/src with INFERBENCH_BINARY=$PWD/bin/inferbench: absolute, as each session
runs in a folder of its own). Extra arguments after -- go to every pytest session
(e.g. -- --inferbench-measure instructions).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import entry_points
from pathlib import Path

PROJECT = '''
import os
SLOW = os.environ.get("GATE_SLOW", "")
def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
MID = int(10000 * (1.1 if SLOW == "mid" else 1))
PED = int(1250 * (1.1 if SLOW == "ped" else 1))
def test_mid(inferbench_benchmark):
    inferbench_benchmark(work, MID)
def test_tiny(inferbench_benchmark):
    inferbench_benchmark(lambda: 3 * 7)
def test_ped(inferbench_benchmark):
    inferbench_benchmark.pedantic(work, args=(PED,), rounds=200, iterations=1)
'''


def plugin_args() -> list[str]:
    if any(ep.name == "inferbench" for ep in entry_points(group="pytest11")):
        return []
    return ["-p", "inferbench.pytest_plugin"]


def session(project: Path, args: list[str], slow: str = "") -> tuple[int, float, str]:
    env = dict(os.environ, GATE_SLOW=slow)
    env.pop("PYTEST_ADDOPTS", None)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:xdist", *plugin_args(), *args]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=900)
    return p.returncode, time.perf_counter() - t0, p.stdout + p.stderr


def medians(run_json: Path) -> dict[str, float]:
    """medians are each test's gated median: instructions per call in instruction mode, else the
    per-call time."""
    doc = json.loads(run_json.read_text())
    out = {}
    for s in doc["scenarios"]:
        m = s["metrics"].get("instructions") or s["metrics"]["latency_ms"]
        out[s["benchmark"]] = m["summary"]["median"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=100, help="trials (each: a save, an unchanged compare, a slowed compare)")
    ap.add_argument("--no-busy", action="store_true", help="no busy loop on the other core")
    ap.add_argument("--save-every", type=int, default=1, metavar="K",
                    help="save a new baseline every K trials (default 1: each trial its own; instruction mode's sessions are slow)")
    ap.add_argument("--pairs", metavar="U,S", help="save U unchanged and S slowed sessions and compare them in pairs (instruction mode)")
    ap.add_argument("extra", nargs="*", help="arguments for every pytest session (after --)")
    a = ap.parse_args()
    if a.pairs:
        u, s = (int(x) for x in a.pairs.split(","))
        return pairs(u, s, a.extra)
    load0 = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else ["?"] * 3
    busy = None if a.no_busy else subprocess.Popen([sys.executable, "-c", "while True: pass"])
    false_fail = found = errors = 0
    deltas_same: list[float] = []
    deltas_slow: list[float] = []
    compare_s: list[float] = []
    sizes: list[int] = []
    t_start = time.time()
    try:
        with tempfile.TemporaryDirectory(prefix="gate-rates-") as tmp:
            project = Path(tmp)
            (project / "test_gate.py").write_text(PROJECT)
            base = project
            for i in range(a.n):
                if i % a.save_every == 0:
                    rc, _, out = session(project, ["--inferbench-save", f"base{i}", *a.extra])
                    if rc != 0:
                        errors += 1
                        print(f"trial {i}: the save failed (exit {rc}):\n{out[-2000:]}", file=sys.stderr)
                        continue
                    base = (project / "benchmark_results" / "latest").resolve()
                    sizes.append(sum(f.stat().st_size for f in base.iterdir()))
                    old = medians(base / "run.json")
                slow = "mid" if i % 2 == 0 else "ped"
                for kind, env_slow in (("same", ""), ("slow", slow)):
                    rc, took, out = session(project, ["--inferbench-compare", str(base), "--inferbench-save", f"{kind}{i}", *a.extra], env_slow)
                    if rc not in (0, 3):
                        errors += 1
                        print(f"trial {i} {kind}: exit {rc}:\n{out[-2000:]}", file=sys.stderr)
                        continue
                    new = medians(sorted((project / "benchmark_results").glob(f"*_{kind}{i}"))[-1] / "run.json")
                    if kind == "same":
                        false_fail += rc == 3
                        deltas_same += [100 * (new[k] / old[k] - 1) for k in old if k in new]
                    else:
                        found += rc == 3
                        deltas_slow.append(100 * (new[f"test_{slow}"] / old[f"test_{slow}"] - 1))
                    m = [ln for ln in out.splitlines() if "passed" in ln]
                    compare_s.append(took)
                    print(f"trial {i} {kind}: exit {rc} ({took:.1f} s) {m[-1] if m else ''}", file=sys.stderr, flush=True)
    finally:
        if busy is not None:
            busy.kill()
    load1 = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else ["?"] * 3
    n_ok = a.n - errors

    def q(xs: list[float], p: float) -> float:
        s = sorted(xs)
        return s[min(len(s) - 1, int(p * len(s)))] if s else float("nan")

    res = {
        "trials": a.n, "errors": errors, "false_failures": false_fail, "detected": found,
        "median_delta_unchanged_pct": {"p1": q(deltas_same, 0.01), "p50": q(deltas_same, 0.5), "p99": q(deltas_same, 0.99), "max": max(deltas_same, default=float("nan"))},
        "median_delta_slowed_pct": {"min": min(deltas_slow, default=float("nan")), "p10": q(deltas_slow, 0.1), "p50": q(deltas_slow, 0.5)},
        "session_s_median": statistics.median(compare_s) if compare_s else None,
        "saved_bytes_max": max(sizes, default=0),
        "loadavg_start": load0, "loadavg_end": load1, "busy_loop": busy is not None,
        "minutes": round((time.time() - t_start) / 60, 1), "extra": a.extra, "save_every": a.save_every,
    }
    print("| unchanged sessions failing | 10% slowdowns found | median change, unchanged (p1 / p50 / p99 / max) | median change, slowed (min / p10 / p50) | load average (start, end) |")
    print("|---|---|---|---|---|")
    d, s = res["median_delta_unchanged_pct"], res["median_delta_slowed_pct"]
    print(f"| {false_fail} of {n_ok} | {found} of {n_ok} | {d['p1']:+.1f}% / {d['p50']:+.1f}% / {d['p99']:+.1f}% / {d['max']:+.1f}% "
          f"| {s['min']:+.1f}% / {s['p10']:+.1f}% / {s['p50']:+.1f}% | {' '.join(load0)}; {' '.join(load1)} |")
    print(json.dumps(res))
    return 0


def binary() -> str:
    """binary is the inferbench command the plugin runs."""
    from inferbench._binary import find_binary

    return str(find_binary())


def pairs(u: int, s: int, extra: list[str]) -> int:
    """pairs measures both rates from u unchanged and s slowed sessions compared in pairs."""
    from inferbench.pytest_plugin import COUNT_THRESHOLD, DEFAULT_THRESHOLD

    load0 = open("/proc/loadavg").read().split()[:3]
    t_start = time.time()
    exe = binary()
    with tempfile.TemporaryDirectory(prefix="gate-pairs-") as tmp:
        project = Path(tmp)
        (project / "test_gate.py").write_text(PROJECT)
        same: list[Path] = []
        slowed: list[tuple[str, Path]] = []
        took: list[float] = []
        for i in range(u + s):
            kind, slow = ("same", "") if i < u else ("slow", "mid" if (i - u) % 2 == 0 else "ped")
            rc, t, out = session(project, ["--inferbench-save", f"{kind}{i}", *extra], slow)
            if rc != 0:
                print(f"session {i} ({kind}): exit {rc}:\n{out[-2000:]}", file=sys.stderr)
                return 1
            took.append(t)
            path = (project / "benchmark_results" / "latest").resolve()
            (same.append(path) if kind == "same" else slowed.append((slow, path)))
            print(f"session {i} ({kind}{' ' + slow if slow else ''}): {t:.1f} s", file=sys.stderr, flush=True)

        def compare(old: Path, new: Path) -> int:
            cmd = [exe, "compare", str(old), str(new), "--threshold", DEFAULT_THRESHOLD, "--threshold", COUNT_THRESHOLD, "--format", "json"]
            return subprocess.run(cmd, capture_output=True, text=True, check=False).returncode

        errors = ff = aa = found = sl = 0
        d_same: list[float] = []
        d_slow: list[float] = []
        med = [medians(p / "run.json") for p in same]  # each unchanged session's, read once
        for i in range(len(same)):
            for j in range(i + 1, len(same)):
                rc = compare(same[i], same[j])
                errors += rc not in (0, 3)
                aa += 1
                ff += rc == 3
                d_same += [100 * (med[j][k] / med[i][k] - 1) for k in med[i] if k in med[j]]
        for slow, path in slowed:
            new = medians(path / "run.json")
            for old_path, old in zip(same, med):
                rc = compare(old_path, path)
                errors += rc not in (0, 3)
                sl += 1
                found += rc == 3
                d_slow.append(100 * (new[f"test_{slow}"] / old[f"test_{slow}"] - 1))
    load1 = open("/proc/loadavg").read().split()[:3]
    print("| unchanged pairs failing | 10% slowdowns found | change of a test's median, unchanged (min / max) | change of the slowed test's median (min / max) | seconds per session (median) | load average (start; end) |")
    print("|---|---|---|---|---|---|")
    print(f"| {ff} of {aa} | {found} of {sl} | {min(d_same):+.3f}% / {max(d_same):+.3f}% | {min(d_slow):+.2f}% / {max(d_slow):+.2f}% "
          f"| {statistics.median(took):.0f} | {' '.join(load0)}; {' '.join(load1)} |")
    print(json.dumps({"unchanged_pairs": aa, "false_failures": ff, "slowed_pairs": sl, "detected": found, "errors": errors,
                      "session_s_median": statistics.median(took), "minutes": round((time.time() - t_start) / 60, 1),
                      "loadavg_start": load0, "loadavg_end": load1, "extra": extra}))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
