"""The Python API against the inferbench binary of the installed wheel (make test-wheel)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from helpers import sleep_command

import inferbench
from inferbench import InferbenchError, RegressionError, UsageError


def test_binary_is_the_wheels():
    # make test-wheel sets INFERBENCH_WHEEL_TEST: the binary must be the one pip installed into
    # this environment's scripts, not one from the checkout or PATH.
    if not os.environ.get("INFERBENCH_WHEEL_TEST"):
        pytest.skip("not under make test-wheel (INFERBENCH_WHEEL_TEST unset)")
    assert "INFERBENCH_BINARY" not in os.environ
    assert Path(inferbench.__file__).resolve().is_relative_to(Path(sysconfig.get_path("purelib")).resolve())
    exe = inferbench.find_binary()
    assert exe.parent == Path(sysconfig.get_path("scripts")), exe
    out = subprocess.run([sys.executable, "-m", "inferbench", "version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("inferbench "), out.stdout


def test_python_m_passes_exit_code(tmp_path):
    # python -m inferbench exits with the binary's code and prints its message.
    p = subprocess.run([sys.executable, "-m", "inferbench", "run", "--no-such-flag"], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 2
    assert "unknown flag: --no-such-flag" in p.stderr


def test_run_returns_typed_run(tmp_path):
    r = inferbench.run(exec=sleep_command(0.002), iterations=8, warmup=2, output_dir=tmp_path / "out", no_store=True, cwd=tmp_path)
    assert r.status == "ok"
    assert r.summary.total == 1 and r.summary.succeeded == 1
    (s,) = r.scenarios
    assert s.iterations.measured == 8 and s.iterations.warmup == 2
    lat = s.metrics["latency_ms"]
    assert lat.unit == "ms" and lat.better == "lower"
    assert lat.summary is not None and lat.summary.n == 8
    assert lat.summary.median >= 2.0  # a 2 ms sleep, in milliseconds
    assert lat.center == lat.summary.median
    assert r.environment["os"] in ("linux", "darwin", "windows")
    assert r.started_at.tzinfo is not None
    # The run folder's run.json, loaded, is the same run.
    assert r.path is not None and r.path.is_file()
    assert inferbench.load(r.path.parent) == r


def write_definitions(root: Path) -> None:
    d = root / "benches" / "unit"
    d.mkdir(parents=True)
    for name, seconds in (("fast", 0.001), ("slow", 0.003)):
        (d / f"{name}.yaml").write_text(
            f"name: {name}\nmodel: m-{name}\nsubject:\n  kind: exec\n  command: {sleep_command(seconds)!r}\n"
            "  shell: true\nload: {warmup_iterations: 1, measurement_iterations: 3}\n"
        )


def test_run_selection_and_load_options(tmp_path):
    write_definitions(tmp_path)
    r = inferbench.run(include="fast", iterations=6, warmup=1, output_dir="out", no_store=True, cwd=tmp_path)
    assert [s.benchmark for s in r.scenarios] == ["fast"]
    assert r.scenarios[0].iterations.measured == 6  # iterations overrides the definition's 3
    r = inferbench.run(model="m-slow", output_dir="out", no_store=True, cwd=tmp_path)
    assert [s.benchmark for s in r.scenarios] == ["slow"]
    assert r.scenarios[0].iterations.measured == 3
    r = inferbench.run(exclude=["fast"], category="unit", output_dir="out", no_store=True, cwd=tmp_path)
    assert [s.benchmark for s in r.scenarios] == ["slow"]


def test_run_error_carries_message_and_code(tmp_path):
    with pytest.raises(UsageError) as e:
        inferbench.run(iterations=-1, exec="true", output_dir=tmp_path, no_store=True, cwd=tmp_path)
    assert e.value.exit_code == 2
    assert "--iterations" in e.value.message or "iterations" in e.value.message
    # A failing command: exit 1, and the run it wrote comes with the error.
    failing = f'"{sys.executable}" -c "import sys; sys.exit(4)"'
    with pytest.raises(InferbenchError) as e:
        inferbench.run(exec=failing, iterations=2, warmup=0, output_dir=tmp_path / "out", no_store=True, cwd=tmp_path)
    assert e.value.exit_code == 1
    assert e.value.run is not None and e.value.run.scenarios[0].status == "failed"
    r = inferbench.run(exec=failing, iterations=2, warmup=0, output_dir=tmp_path / "out", no_store=True, cwd=tmp_path, check=False)
    assert r.status == "failed" and r.summary.failed == 1


def test_compare_verdict_matches_command(tmp_path):
    store = tmp_path / "h.db"
    base = inferbench.run(exec=sleep_command(0.005), iterations=12, warmup=1, output_dir=tmp_path / "out", store=store, cwd=tmp_path, extra_args=["--name", "nap"])
    slow = inferbench.run(exec=sleep_command(0.03), iterations=12, warmup=1, output_dir=tmp_path / "out", store=store, cwd=tmp_path, extra_args=["--name", "nap"])
    same = inferbench.compare(base, base, text=True)
    assert same.exit_code == 0 and not same.failed and same.regressions == 0
    assert "no regression" in same.text or "ok" in same.text
    worse = inferbench.compare(base.path, slow.path)
    assert worse.exit_code == 3 and worse.failed
    assert worse.regressions >= 1
    (row,) = [r for r in worse.regressed_rows if r.metric == "latency_ms"]
    assert row.benchmark == "nap" and row.delta_pct is not None and row.delta_pct > 100
    assert worse.old.id == base.id and worse.new.id == slow.id
    assert worse.raw["regressions"] == worse.regressions
    # The command line's exit code for the same pair, and store references.
    p = subprocess.run([str(inferbench.find_binary()), "compare", str(base.path), str(slow.path)], capture_output=True, text=True)
    assert p.returncode == worse.exit_code
    latest = inferbench.compare(base.id, "latest", store=store, results_dir=tmp_path / "out")
    assert latest.exit_code == 3 and latest.new.id == slow.id


def test_compare_missing_run_raises(tmp_path):
    # A run that is not there is a usage error of compare (exit 2), with the path and a hint.
    with pytest.raises(UsageError) as e:
        inferbench.compare(tmp_path / "nope.json", "nope2", store=tmp_path / "h.db")
    assert e.value.exit_code == 2
    assert "nope" in e.value.message and "--results-dir" in e.value.message
    assert not isinstance(e.value, RegressionError)


def test_import_results(tmp_path):
    pb = tmp_path / "bench.json"
    pb.write_text(
        '{"machine_info": {}, "commit_info": {}, "datetime": "2026-01-02T03:04:05", "benchmarks": ['
        '{"group": null, "name": "test_x", "fullname": "t.py::test_x", "params": null,'
        ' "stats": {"min": 0.001, "max": 0.002, "mean": 0.0015, "stddev": 0.0002, "median": 0.0015,'
        ' "q1": 0.0012, "q3": 0.0018, "rounds": 7, "ops": 666.0, "data": [0.001, 0.0012, 0.0014, 0.0015, 0.0016, 0.0018, 0.002]}}]}'
    )
    (rid,) = inferbench.import_results(pb, store=tmp_path / "h.db", id="pb1")
    assert rid == "pb1"
    c = inferbench.compare("pb1", "pb1", store=tmp_path / "h.db")
    assert c.exit_code == 0 and c.rows and c.rows[0].benchmark == "test_x"


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in binary is a script with a #! line")
def test_options_become_flags(tmp_path):
    # Every option reaches the command line as the flag the binary knows: a stand-in binary
    # records its arguments and prints a minimal run.
    argv = tmp_path / "argv.json"
    fake = tmp_path / "inferbench"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        f"json.dump(sys.argv[1:], open({str(argv)!r}, 'w'))\n"
        "print(json.dumps({'schema': 'inferbench/run/v1', 'id': 'r', 'partial': False, 'started_at': '2026-01-01T00:00:00Z',\n"
        "  'environment': {}, 'config': {}, 'summary': {'total': 0, 'succeeded': 0, 'failed': 0, 'skipped': 0, 'success_rate': 0},\n"
        "  'scenarios': []}))\n"
    )
    fake.chmod(0o755)
    inferbench.run(
        ["benches", tmp_path / "more"], include=["a*", "b"], exclude="c", category=["unit", "performance"], model="resnet50",
        tag="fast", framework="pytorch", batch_sizes=[1, 8, 32], set={"dtype": "float16"}, iterations=50, warmup=10,
        enable_mock=True, output_dir="out", store="h.db", no_store=True, baseline="main", extra_args=["--threads", "2"], binary=fake,
    )
    args = json.loads(argv.read_text())
    assert args == [
        "run", "benches", str(tmp_path / "more"), "--include", "a*", "--include", "b", "--exclude", "c",
        "--category", "unit,performance", "--model", "resnet50", "--tag", "fast", "--framework", "pytorch",
        "--batch-sizes", "1,8,32", "--set", "dtype=float16", "--iterations", "50", "--warmup", "10",
        "--enable-mock", "--output-dir", "out", "--store", "h.db", "--no-store", "--baseline", "main",
        "--threads", "2", "--format", "json",
    ]


def test_definition_error_carries_file_line_and_hint(tmp_path):
    # Before: "1 problem(s) in benchmark definitions:" with the file:line only in e.stderr.
    d = tmp_path / "benches"
    d.mkdir()
    (d / "x.yaml").write_text('name: x\nmodel: m\nsubject:\n  kind: exec\n  command: "true"\nload: {warmup_iterations: 1, measurment_iterations: 3}\n')
    with pytest.raises(UsageError) as e:
        inferbench.run(["benches"], no_store=True, cwd=tmp_path)
    want = 'benches/x.yaml:6:30: unknown key "measurment_iterations" (did you mean "measurement_iterations"?)'
    assert want in e.value.message and want in str(e.value)
    assert "1 problem(s) in benchmark definitions" in str(e.value) and e.value.exit_code == 2
    assert isinstance(e.value, ValueError)


@pytest.mark.skipif(sys.platform == "win32", reason="executable bits and #! scripts")
def test_unusable_binaries_raise_the_package_errors(tmp_path, monkeypatch):
    # Before: a bare FileNotFoundError, PermissionError or OSError from subprocess.
    with pytest.raises(inferbench.BinaryNotFound, match=r"binary=.*nope: no such file") as e:
        inferbench.run(exec="true", binary=tmp_path / "nope")
    assert isinstance(e.value, InferbenchError) and isinstance(e.value, FileNotFoundError)
    text = tmp_path / "notes.txt"
    text.write_text("not a program\n")
    monkeypatch.setenv("INFERBENCH_BINARY", str(text))
    with pytest.raises(inferbench.BinaryNotFound, match=r"INFERBENCH_BINARY=.*notes.txt: not executable \(chmod \+x"):
        inferbench.import_results(tmp_path / "x.json")
    text.chmod(0o755)
    with pytest.raises(inferbench.BinaryNotFound, match=r"INFERBENCH_BINARY=.*notes.txt: cannot run it: Exec format error"):
        inferbench.import_results(tmp_path / "x.json")
    monkeypatch.setenv("INFERBENCH_BINARY", str(tmp_path))
    with pytest.raises(inferbench.BinaryNotFound, match="not a file"):
        inferbench.find_binary()


def test_timeout_raises_command_timeout(tmp_path):
    with pytest.raises(inferbench.CommandTimeout, match=r"did not finish in 0.5 s") as e:
        inferbench.run(exec=sleep_command(2), iterations=3, warmup=0, no_store=True, output_dir=tmp_path, cwd=tmp_path, timeout=0.5)
    assert isinstance(e.value, TimeoutError) and isinstance(e.value, InferbenchError)


def test_nothing_comparable_raises_exit_1(tmp_path):
    # compare's docstring said "nothing comparable" exits 3; the command exits 1, and the API raises.
    a = inferbench.run(exec=sleep_command(0.001), iterations=3, warmup=0, output_dir=tmp_path / "out", no_store=True, cwd=tmp_path, extra_args=["--name", "a"])
    b = inferbench.run(exec=sleep_command(0.001), iterations=3, warmup=0, output_dir=tmp_path / "out", no_store=True, cwd=tmp_path, extra_args=["--name", "b"])
    with pytest.raises(InferbenchError) as e:
        inferbench.compare(a, b)
    assert e.value.exit_code == 1 and "nothing comparable" in e.value.message
    assert "exit 1)" in (inferbench.compare.__doc__ or "") or "Exit 1" in (inferbench.compare.__doc__ or "")


def test_load_errors_are_result_errors(tmp_path):
    with pytest.raises(inferbench.ResultError, match="give a run.json or a run folder"):
        inferbench.load(tmp_path / "missing")
    (tmp_path / "pb.json").write_text('{"benchmarks": []}')
    with pytest.raises(inferbench.ResultError, match="not an inferbench run.json"):
        inferbench.load(tmp_path / "pb.json")
    r = inferbench.run(exec="true", iterations=2, warmup=0, output_dir=tmp_path / "out", no_store=True, cwd=tmp_path)
    r.path = None  # a Run without a file cannot be compared: UsageError, a ValueError
    with pytest.raises(UsageError, match="has no file"):
        inferbench.compare(r, r)
