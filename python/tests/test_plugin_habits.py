"""The plugin's gate, size and pytest habits: xdist, pytest-benchmark's names, skip/only/disable,
the table, group-by and sort, histograms, cProfile, GC and timer options."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import xml.dom.minidom
from pathlib import Path

import pytest
from helpers import FIXTURE, needs_latest, pytest_in

import inferbench

NO_PB = ["-p", "no:benchmark"]  # pytest-benchmark, when installed, owns its names: these tests use ours

# Three tests in the shape: a function of a few hundred microseconds, one of about 100 ns
# and a pedantic one.
THREE = """
import os
N = int(300 * float(os.environ.get("FIXTURE_SLOWDOWN", "1")))
def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def test_mid(inferbench_benchmark):
    inferbench_benchmark(work, 20 * N)
def test_tiny(inferbench_benchmark):
    inferbench_benchmark(lambda: 3 * 7)
def test_ped(inferbench_benchmark):
    inferbench_benchmark.pedantic(work, args=(N,), rounds=300, iterations=1)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "project"
    shutil.copytree(FIXTURE, p)
    return p


def spy_binary(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """spy_binary is an INFERBENCH_BINARY that logs each command line and runs the real binary."""
    real = inferbench.find_binary()
    log = tmp_path / "calls.log"
    spy = tmp_path / "spy"
    spy.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{real}" "$@"\n')
    spy.chmod(0o755)
    return {"INFERBENCH_BINARY": str(spy)}, log


def test_calibrates_after_warm_up(project: Path):
    # A function whose first call is slow (a cold cache, an import) and whose warm calls take
    # ~100 ns: calibrating before the warm-up settled on 1 iteration a round.
    (project / "test_suite.py").write_text(
        "import time\n"
        "cold = [True]\n"
        "def f():\n"
        "    if cold[0]:\n"
        "        cold[0] = False\n"
        "        time.sleep(0.01)\n"
        "    return 1\n"
        "def test_f(inferbench_benchmark):\n"
        "    inferbench_benchmark(f)\n"
    )
    p = pytest_in(project, "--inferbench-json", "pb.json", "--inferbench-max-time", "0.05")
    assert p.returncode == 0, p.stdout + p.stderr
    (b,) = json.loads((project / "pb.json").read_text())["benchmarks"]
    assert b["stats"]["iterations"] >= 10, b["stats"]["iterations"]
    # A round lasts about min_time (5 us): calibrated on the fastest of three rounds, so a machine
    # whose load drops after calibration runs them somewhat shorter, never 25 times.
    assert b["stats"]["median"] * b["stats"]["iterations"] >= 2e-6


@pytest.mark.skipif(sys.platform == "win32", reason="the spy binary is a shell script")
def test_saved_session_is_small_and_compared_once(project: Path, tmp_path: Path):
    (project / "test_suite.py").write_text(THREE)
    env, log = spy_binary(tmp_path)
    saved = pytest_in(project, "--inferbench-save", "base", "--inferbench-max-time", "0.3", env=env)
    assert saved.returncode == 0, saved.stdout + saved.stderr
    folder = (project / "benchmark_results" / "latest").resolve()
    size = sum(f.stat().st_size for f in folder.iterdir())
    assert size <= 1_000_000, size  # 11.7 MB before (195,008 rounds of the fast test kept)
    run = inferbench.load(folder)
    for s in run.scenarios:
        lat = s.metrics["latency_ms"]
        assert lat.samples is not None and len(lat.samples) <= 99, (s.id, len(lat.samples or []))
        assert s.gate == ["latency_ms"], s.gate  # the plugin's gate, written out
        assert s.iterations.measured >= len(lat.samples)
    tiny = run.scenario("test_tiny")
    assert any("summarized into 99 samples" in w for w in tiny.warnings), tiny.warnings

    log.write_text("")
    same = pytest_in(project, "--inferbench-compare", "benchmark_results/latest", "--inferbench-max-time", "0.3",
                     "--inferbench-threshold", "latency_ms=1000", env=env)
    assert same.returncode == 0, same.stdout + same.stderr
    calls = [ln.split()[0] for ln in log.read_text().splitlines()]
    assert calls.count("compare") == 1, calls  # compared once: the table and the JSON of one comparison
    assert "report" in calls and calls.count("report") == 1  # the run's JSON; no second table
    # Only the median gates: the compare JSON of the session has no tail rows.
    assert "latency_ms" in same.stdout and "latency_ms.p95" not in same.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="the spy binary is a shell script")
@needs_latest
def test_default_threshold_and_tail_gate(project: Path, tmp_path: Path):
    (project / "test_suite.py").write_text(THREE)
    env, log = spy_binary(tmp_path)
    p = pytest_in(project, "--inferbench-save", "--inferbench-compare", "benchmark_results/nope", "--inferbench-max-time", "0.2",
                  "--inferbench-gate", "latency_ms.p99", env=env)
    assert p.returncode == 1, p.stdout  # the baseline does not exist
    compare = next(ln for ln in log.read_text().splitlines() if ln.startswith("compare "))
    assert "--threshold latency_ms=5" in compare and "--gate latency_ms.p99" in compare, compare
    run = inferbench.load(project / "benchmark_results" / "latest")
    tiny = run.scenario("test_tiny")
    assert tiny.gate == ["latency_ms", "latency_ms.p99"]
    assert 500 <= len(tiny.metrics["latency_ms"].samples or []) <= 2000  # single rounds, enough for a p99
    # A thresholds file of the project's own replaces the plugin's default.
    (project / "benchmark_thresholds.json").write_text('{"latency_regression_threshold": 12}')
    log.write_text("")
    pytest_in(project, "--inferbench-compare", "benchmark_results/nope", "--inferbench-max-time", "0.05", env=env)
    compare = next(ln for ln in log.read_text().splitlines() if ln.startswith("compare "))
    assert "--threshold" not in compare, compare


def test_save_that_saved_nothing_fails(project: Path):
    (project / "test_suite.py").write_text("def test_plain():\n    pass\n")
    p = pytest_in(project, "--inferbench-save")
    assert p.returncode == 1, p.stdout
    assert "nothing saved (no test used the benchmark fixture)" in p.stdout
    assert not (project / "benchmark_results").exists()


@pytest.mark.skipif(importlib.util.find_spec("xdist") is None, reason="pytest-xdist is not installed (python/requirements-test.txt has it)")
def test_xdist_disables_benchmarks_and_the_save_fails(project: Path):
    # Before: "no benchmark ran" and exit 0, a CI save step passing with nothing saved.
    p = pytest_in(project, "-n", "2", "--inferbench-save", "-W", "default")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "benchmarks disabled under pytest-xdist" in p.stdout
    assert "5 passed" in p.stdout  # the tests themselves ran, their functions once
    assert "nothing saved (benchmarks are disabled under pytest-xdist: run them with -n 0)" in p.stdout
    plain = pytest_in(project, "-n", "2")
    assert plain.returncode == 0, plain.stdout + plain.stderr


MIGRATED = """
import pytest
@pytest.mark.benchmark(group="parse", min_rounds=7, calibration_precision=10)
def test_parse(benchmark):
    assert benchmark(int, "42") == 42
def test_plain():
    assert True
"""


def test_pytest_benchmark_names(project: Path):
    # A suite left as pytest-benchmark wrote it: the fixture `benchmark`, its marker and flags.
    (project / "test_suite.py").write_text(MIGRATED)
    p = pytest_in(project, *NO_PB, "--benchmark-json", "pb.json", "--benchmark-max-time", "0.05")
    assert p.returncode == 0, p.stdout + p.stderr
    (b,) = json.loads((project / "pb.json").read_text())["benchmarks"]
    assert b["group"] == "parse" and b["stats"]["rounds"] >= 7  # the marker's group and min_rounds
    assert "@pytest.mark.benchmark(calibration_precision=...) is ignored" in p.stdout
    skip = pytest_in(project, *NO_PB, "--benchmark-skip")
    assert "1 passed, 1 skipped" in skip.stdout, skip.stdout
    only = pytest_in(project, *NO_PB, "--inferbench-only")
    assert "1 passed, 1 skipped" in only.stdout, only.stdout
    off = pytest_in(project, *NO_PB, "--benchmark-disable", "--inferbench-json", "pb.json")
    assert "2 passed" in off.stdout and json.loads((project / "pb.json").read_text())["benchmarks"] == []


@pytest.mark.skipif(importlib.util.find_spec("pytest_benchmark") is None, reason="pytest-benchmark is not installed (python/requirements-test.txt has it)")
def test_pytest_benchmark_installed_keeps_its_fixture(project: Path):
    (project / "test_suite.py").write_text(MIGRATED)
    p = pytest_in(project, "--inferbench-save", "--benchmark-max-time", "0.05", "-W", "default")
    # `benchmark` is pytest-benchmark's: its table, a warning, and nothing in inferbench's run.
    assert "pytest-benchmark's here" in p.stdout, p.stdout
    assert "nothing saved" in p.stdout and p.returncode == 1
    # Its flags of the same meaning reach inferbench's fixture too.
    (project / "test_suite.py").write_text("def test_b(inferbench_benchmark):\n    inferbench_benchmark(int, '1')\n")
    skip = pytest_in(project, "--benchmark-skip")
    assert "1 skipped" in skip.stdout, skip.stdout


def header(out: str) -> str:
    return next(ln for ln in out.splitlines() if ln.startswith("BENCHMARK"))


def test_one_table_group_by_sort(project: Path):
    plain = pytest_in(project, "--inferbench-max-time", "0.05")
    saved = pytest_in(project, "--inferbench-max-time", "0.05", "--inferbench-save")
    assert plain.returncode == 0 and saved.returncode == 0, saved.stdout
    # Before, a saved session printed the binary's run table (SCENARIO STATUS N P50 ms ...) and
    # an unsaved one the plugin's.
    assert header(plain.stdout).split()[:3] == header(saved.stdout).split()[:3] == ["BENCHMARK", "MIN", "(ms)"]
    by = pytest_in(project, "--inferbench-max-time", "0.05", "--inferbench-group-by", "func", "--inferbench-sort", "name", "-k", "nap")
    lines = by.stdout.splitlines()
    i = lines.index("test_nap")  # the group's header
    assert [ln.split()[0] for ln in lines[i + 2 : i + 4]] == ["test_nap[1]", "test_nap[3]"]
    bad = pytest_in(project, "--inferbench-sort", "fastest")
    assert bad.returncode == 4 and "--inferbench-sort fastest: want one of" in bad.stderr


def test_histogram_cprofile_gc_timer(project: Path):
    (project / "test_suite.py").write_text(
        "import gc\n"
        "seen = []\n"
        "def f():\n"
        "    seen.append(gc.isenabled())\n"
        "    return sorted(range(50))\n"
        "def test_f(inferbench_benchmark):\n"
        "    inferbench_benchmark(f)\n"
        "    assert not any(seen[-50:-1]) and seen[-1] and gc.isenabled()  # the last call returns the result\n"
    )
    p = pytest_in(project, "--inferbench-max-time", "0.05", "--inferbench-histogram", "out/h", "--inferbench-cprofile", "tottime",
                  "--inferbench-disable-gc", "--inferbench-timer", "time.process_time", "--inferbench-json", "pb.json")
    assert p.returncode == 0, p.stdout + p.stderr
    (svg,) = (project / "out").glob("h-*.svg")
    assert "test_f" in xml.dom.minidom.parse(str(svg)).toxml()
    assert "cProfile of test_suite.py::test_f" in p.stdout and "ncalls" in p.stdout and "sorted" in p.stdout
    (b,) = json.loads((project / "pb.json").read_text())["benchmarks"]
    assert b["options"]["timer"] == "process_time" and b["options"]["disable_gc"] is True
    # process_time's grain is coarser than perf_counter's: rounds are longer.
    assert b["stats"]["median"] * b["stats"]["iterations"] >= 100 * 1e-9


def test_xdist_absent_is_not_xdist(project: Path):
    # The xdist check reads options that only exist with pytest-xdist: without it nothing changes.
    p = pytest_in(project, "-p", "no:xdist", "--inferbench-max-time", "0.05", "-k", "tokenize")
    assert p.returncode == 0 and "disabled under pytest-xdist" not in p.stdout, p.stdout
    assert os.environ.get("PYTEST_XDIST_WORKER") is None
