"""Shared by the tests: where the checkout is, and a run to compare."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout
SCHEMA = ROOT / "docs" / "run.schema.json"
SLEEP = shutil.which("sleep")
FIXTURE = Path(__file__).parent / "fixture_project"


def needs_latest(fn):  # type: ignore[no-untyped-def]
    """needs_latest skips a test that reads benchmark_results/latest where no such link is made."""
    import pytest

    return pytest.mark.skipif(sys.platform == "win32", reason="no latest link on Windows (docs/python.md, Limits)")(fn)


def sleep_command(seconds: float) -> str:
    """sleep_command is a command line that takes about seconds, for --exec."""
    if SLEEP:
        return f"{SLEEP} {seconds}"
    return f'"{sys.executable}" -c "import time; time.sleep({seconds})"'


def plugin_args() -> list[str]:
    names = {ep.name for ep in entry_points(group="pytest11")}
    if "inferbench" in names:
        return []
    if os.environ.get("INFERBENCH_WHEEL_TEST"):
        raise AssertionError("the installed wheel has no pytest11 entry point named inferbench")
    return ["-p", "inferbench.pytest_plugin"]  # from the source tree


def pytest_in(project: Path, *args: str, slowdown: float = 1, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, FIXTURE_SLOWDOWN=str(slowdown), **(env or {}))
    env.pop("PYTEST_ADDOPTS", None)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin_args(), *args]
    return subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=300)
