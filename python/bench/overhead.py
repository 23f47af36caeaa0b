"""overhead.py: the inferbench_benchmark fixture against pytest-benchmark's benchmark (docs/python.md).

    python3 python/bench/overhead.py [--repeats 7] [--rounds 20000] [--venv /tmp/inferbench-overhead]

Makes a venv with pytest and pytest-benchmark (python/bench/requirements.txt; not CI's) and runs
one pytest session in which both fixtures time the same functions, interleaved (pb, ib, pb, ib...):

- a no-op with pedantic(rounds=R, iterations=1): the time each reports per round (the timer's
  and the call's cost inside the timed region) and the wall time per round of the whole call
  (what the harness adds around each round);
- a function of 1 ms (a loop on time.perf_counter) with the default calibrated call: the medians
  both report, and their ratio.

Prints the medians over the repeats as a markdown table. The plugin is loaded from python/src.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"

SUITE = textwrap.dedent(
    """
    import json, os, time
    import pytest

    REPEATS = int(os.environ["OVERHEAD_REPEATS"])
    ROUNDS = int(os.environ["OVERHEAD_ROUNDS"])
    OUT = os.environ["OVERHEAD_OUT"]
    FIXTURE = {"pb": "benchmark", "ib": "inferbench_benchmark"}

    def noop():
        pass

    def work(seconds):
        # 1 ms of the interpreter's own work: a loop on the clock, whatever the CPU's speed.
        end = time.perf_counter() + seconds
        n = 0
        while time.perf_counter() < end:
            n += 1
        return seconds

    def record(key, value):
        with open(OUT, "a") as f:
            f.write(json.dumps({"key": key, "value": value}) + "\\n")

    @pytest.mark.parametrize("tool", ["pb", "ib"])
    @pytest.mark.parametrize("rep", range(REPEATS))
    def test_noop(request, rep, tool):
        bench = request.getfixturevalue(FIXTURE[tool])
        t0 = time.perf_counter()
        bench.pedantic(noop, rounds=ROUNDS, iterations=1)
        record(f"noop_wall_{tool}", (time.perf_counter() - t0) / ROUNDS)

    @pytest.mark.parametrize("tool", ["pb", "ib"])
    @pytest.mark.parametrize("rep", range(REPEATS))
    def test_1ms(request, rep, tool):
        bench = request.getfixturevalue(FIXTURE[tool])
        assert bench(work, 1e-3) == 1e-3
    """
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=20000)
    ap.add_argument("--venv", default=os.path.join(tempfile.gettempdir(), "inferbench-overhead-venv"))
    a = ap.parse_args()
    py = Path(a.venv) / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", a.venv], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", str(HERE / "requirements.txt")], check=True)
    with tempfile.TemporaryDirectory(prefix="inferbench-overhead-") as tmp:
        t = Path(tmp)
        (t / "test_overhead.py").write_text(SUITE)
        env = dict(os.environ, PYTHONPATH=str(SRC), OVERHEAD_REPEATS=str(a.repeats), OVERHEAD_ROUNDS=str(a.rounds), OVERHEAD_OUT=str(t / "wall.jsonl"))
        cmd = [str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "inferbench.pytest_plugin",
               "--benchmark-json", str(t / "pb.json"), "--inferbench-json", str(t / "ib.json"), "test_overhead.py"]
        p = subprocess.run(cmd, cwd=t, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stdout[-4000:], p.stderr[-4000:], sep="\n")
            return 1
        medians: dict[str, list[float]] = {}
        for tool, name in (("pb", "pb.json"), ("ib", "ib.json")):
            for b in json.loads((t / name).read_text())["benchmarks"]:
                test = b["name"].split("[")[0]
                medians.setdefault(f"{test}_{tool}", []).append(b["stats"]["median"])
        for line in (t / "wall.jsonl").read_text().splitlines():
            d = json.loads(line)
            medians.setdefault(d["key"], []).append(d["value"])
    ratios = [ib / pb for ib, pb in zip(medians["test_1ms_ib"], medians["test_1ms_pb"])]
    m = {k: statistics.median(v) for k, v in medians.items()}
    print(f"python {sys.version.split()[0]}, {a.repeats} repeats interleaved, no-op: pedantic {a.rounds} rounds x 1 iteration")
    print()
    print("| measure | pytest-benchmark | inferbench | difference |")
    print("|---|---|---|---|")
    print(f"| no-op, reported time per round (timer + call) | {m['test_noop_pb'] * 1e9:.0f} ns | {m['test_noop_ib'] * 1e9:.0f} ns | {(m['test_noop_ib'] - m['test_noop_pb']) * 1e9:+.0f} ns |")
    print(f"| no-op, wall time per round (whole pedantic call / rounds) | {m['noop_wall_pb'] * 1e9:.0f} ns | {m['noop_wall_ib'] * 1e9:.0f} ns | {(m['noop_wall_ib'] - m['noop_wall_pb']) * 1e9:+.0f} ns |")
    print(f"| 1 ms function, median | {m['test_1ms_pb'] * 1e3:.4f} ms | {m['test_1ms_ib'] * 1e3:.4f} ms | {(statistics.median(ratios) - 1) * 100:+.2f}% (median of the ratios; range {(min(ratios) - 1) * 100:+.2f}% to {(max(ratios) - 1) * 100:+.2f}%) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
