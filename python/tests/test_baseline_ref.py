"""pytest --inferbench-baseline-ref REF (_baseline_ref.py): each benchmarked test measured at REF
and in the working tree in one job, through inferbench run --baseline-ref and the worker's
pytest adapter. Issue 41: before, the plugin could only compare a session with a saved one."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import pytest_in

TESTS = '''import hashlib

ROUNDS = {rounds}


def work(n):
    h = b"x"
    for _ in range(n):
        h = hashlib.sha256(h).digest()
    return h


def test_hash(benchmark):
    assert len(benchmark(work, ROUNDS)) == 32


def test_plain():
    assert work(3)
'''

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    (tmp_path / "test_perf.py").write_text(TESTS.format(rounds=2000))
    env = dict(os.environ, **GIT_ENV)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=tmp_path, env=env, check=True, capture_output=True)
    return tmp_path


def test_regression_against_the_ref(repo: Path):
    # The working tree's function does 3x the work: exit 3, the run's table in the summary; the
    # test without the fixture ran in the session; the definition is gone from the tree.
    (repo / "test_perf.py").write_text(TESTS.format(rounds=6000))
    p = pytest_in(repo, "--inferbench-baseline-ref", "HEAD")
    assert p.returncode == 3, p.stdout + p.stderr
    for want in ("inferbench against HEAD", "test_perf.test_hash/default", "REGRESSION", "1 passed, 1 deselected",
                 "the session fails with inferbench run's exit code 3"):
        assert want in p.stdout, (want, p.stdout)
    assert not (repo / ".inferbench-baseline-ref.yaml").exists()
    assert list((repo / "benchmark_results").glob("*/run.json"))


def test_unchanged_passes(repo: Path):
    # The same code on both sides (a generous threshold: this checks the plumbing, and
    # docs/measurements/verdicts.md the rates at the default one).
    p = pytest_in(repo, "--inferbench-baseline-ref", "HEAD", "--inferbench-threshold", "latency=25", "--inferbench-threshold", "cpu=25")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 benchmarked test(s) measured against HEAD in this job: no regression" in p.stdout, p.stdout
    # Only benchmarked tests selected: none runs in the session, yet the session passes (it
    # exited 5, pytest's "no tests ran", before; pint's suite under -k did so).
    only = pytest_in(repo, "--inferbench-baseline-ref", "HEAD", "-k", "hash", "--inferbench-threshold", "latency=25", "--inferbench-threshold", "cpu=25")
    assert only.returncode == 0, only.stdout + only.stderr


def test_refused_with_what_it_does_not_do(repo: Path):
    # Each session option the paired run does not take is refused, naming it; before, the
    # timing and table options were ignored.
    for other in (["--inferbench-compare", "latest"], ["--inferbench-save"], ["--inferbench-max-time", "0.1"],
                  ["--inferbench-histogram"], ["--inferbench-skip"]):
        p = pytest_in(repo, "--inferbench-baseline-ref", "HEAD", *other)
        assert p.returncode == 4, p.stdout + p.stderr
        assert f"--inferbench-baseline-ref with {other[0]}" in p.stderr, p.stderr


@pytest.mark.skipif(importlib.util.find_spec("xdist") is None, reason="pytest-xdist is not installed (python/requirements-test.txt has it)")
def test_refused_under_xdist(repo: Path):
    # Before: xdist's workers collected (and deselected) the tests, the controller none, and the
    # session failed with "no test uses the benchmark fixture".
    p = pytest_in(repo, "--inferbench-baseline-ref", "HEAD", "-n", "2")
    assert p.returncode == 4, p.stdout + p.stderr
    assert "--inferbench-baseline-ref with pytest-xdist (-n)" in p.stderr, p.stderr


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed (CI installs it)")
def test_counted_against_the_ref(repo: Path):
    # --inferbench-measure instructions counts both sides under callgrind, the calls in each
    # test's thread: 1.5x the work is an exact regression (exit 3). Before, the option was
    # refused with --inferbench-baseline-ref.
    (repo / "test_perf.py").write_text(TESTS.format(rounds=3000))
    p = pytest_in(repo, "--inferbench-baseline-ref", "HEAD", "--inferbench-measure", "instructions", "--inferbench-rounds", "5", "-k", "hash")
    assert p.returncode == 3, p.stdout + p.stderr
    assert "instructions" in p.stdout and "REGRESSION" in p.stdout, p.stdout


def test_options_passed_on():
    # The session options the run against the ref takes reach inferbench run; before, --inferbench-gate,
    # --inferbench-secret-param and (timed) --inferbench-rounds were ignored.
    from inferbench._baseline_ref import BaselineRef

    given = {"inferbench_output_dir": "out", "inferbench_store": None, "inferbench_threshold": ["latency=5"],
             "inferbench_gate": ["latency_ms.p99"], "inferbench_secret_param": ["token"], "inferbench_strict": True,
             "inferbench_measure": "time", "inferbench_rounds": 12}

    class Config:
        def getoption(self, name):
            return given[name]

    args = BaselineRef(Config(), "main").args(Path("d.yaml"))  # type: ignore[arg-type]
    assert args[:4] == ["run", "--baseline-ref", "main", "d.yaml"]
    for pair in (["--gate", "latency_ms.p99"], ["--secret-param", "token"], ["--iterations", "12"], ["--threshold", "latency=5"], ["--no-store"]):
        i = args.index(pair[0])
        assert args[i:i + len(pair)] == pair, args
    assert "--strict" in args and "--measure" not in args
