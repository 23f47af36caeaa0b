"""Shared by the tests: where the checkout is, and a run to compare."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout
SCHEMA = ROOT / "docs" / "run.schema.json"
SLEEP = shutil.which("sleep")


def sleep_command(seconds: float) -> str:
    """sleep_command is a command line that takes about seconds, for --exec."""
    if SLEEP:
        return f"{SLEEP} {seconds}"
    return f'"{sys.executable}" -c "import time; time.sleep({seconds})"'
