"""Third-party benchmark suites run under the plugin unmodified (issue 46): installed pinned
from PyPI (requirements-compat.txt), saved, run again and compared, every test matched to itself."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers import needs_latest, pytest_in

from inferbench import _binary

# Quick sessions: a few rounds a test (the suite is not modified: flags only). The comparison of
# two unchanged sessions on a shared machine passes whatever the load.
QUICK = ["-p", "no:benchmark", "--benchmark-max-time=0.005", "--benchmark-min-rounds=5", "-W", "ignore"]
SAME = ["--threshold", "latency=100000", "--threshold", "latency_ms.p95=100000", "--threshold", "latency_ms.p99=100000"]


def _need(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        if os.environ.get("INFERBENCH_WHEEL_TEST"):  # make test-wheel installs it: a skip would hide a failure
            raise AssertionError(f"{module} is not installed: make test-wheel installs python/requirements-compat.txt")
        pytest.skip(f"{module} is not installed (python/requirements-compat.txt has it)")


@needs_latest
def test_pint_registry_suite(tmp_path: Path):
    # pint 0.25.3's test_10_registry.py: 104 tests parametrized by `key` and `unit`
    # ('kilometer/second'). Before: `key` was masked as a secret and its values inside the other
    # parameters, 104 tests shared 36 matching keys and 86 were compared with another's baseline.
    _need("pint")
    suite = ["--pyargs", "pint.testsuite.benchmarks.test_10_registry"]
    runs = []
    for name in ("base", "again"):
        p = pytest_in(tmp_path, *QUICK, *suite, "--inferbench-save", name)
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
        runs.append((tmp_path / "benchmark_results" / "latest").resolve())
    run = json.loads((runs[1] / "run.json").read_text())
    tests = {s["source"]: s for s in run["scenarios"]}
    assert len(tests) == len(run["scenarios"]) >= 100, len(tests)
    getattr_km = [s for src, s in tests.items() if "test_getattr[" in src and "kilometer" in src]
    assert getattr_km and all(s["params"]["key"] == "kilometer" for s in getattr_km), getattr_km[:1]
    assert any(s.get("params", {}).get("unit") == "kilometer/second" for s in run["scenarios"])
    p = subprocess.run([str(_binary.find_binary()), "compare", str(runs[0]), str(runs[1]), "--format", "json", *SAME],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr
    rep = json.loads(p.stdout)
    matched = {(r["benchmark"], r["scenario"]) for r in rep["rows"] if r["metric"] == "latency_ms"}
    assert len(matched) == len(tests) and not rep.get("only_old") and not rep.get("only_new"), (len(matched), len(tests))


def test_pint_whole_suite_saves(tmp_path: Path):
    # Every module of pint's benchmarks (numpy's skip without numpy), saved in one session.
    _need("pint")
    p = pytest_in(tmp_path, *QUICK, "--pyargs", "pint.testsuite.benchmarks", "--inferbench-save", "--benchmark-json=pb.json")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    n = len(json.loads((tmp_path / "pb.json").read_text())["benchmarks"])
    assert n >= 200 and f"{n} benchmark(s) saved" in p.stdout, p.stdout[-500:]
