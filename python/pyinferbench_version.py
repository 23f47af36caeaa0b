"""The version of the pyinferbench distribution, read by hatchling (pyproject.toml, [tool.hatch.version]).

In order: $INFERBENCH_PY_VERSION (make wheels sets it); the PKG-INFO of an sdist being built; the
checkout's `git describe` in PEP 440 form (a tag vX.Y.Z is X.Y.Z, anything else
0.0.dev0+g<describe>, which pip installs from a file or folder but an index refuses); else
0.0.dev0, so `pip install python/` and `pip install .` work from any copy of the source.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

FALLBACK = "0.0.dev0"


def pep440(describe: str) -> str:
    """pep440 turns `git describe --tags --always --dirty` into a PEP 440 version."""
    m = re.fullmatch(r"v?(\d+\.\d+\.\d+)", describe)
    if m:
        return m.group(1)
    local = re.sub(r"[^A-Za-z0-9]+", ".", describe.removeprefix("v")).strip(".")
    return f"{FALLBACK}+g{local.removeprefix('g')}" if local else FALLBACK


def _from_pkg_info(here: Path) -> str:
    for d in (here, here.parent):  # the sdist of python/, or of the repository
        p = d / "PKG-INFO"
        if p.is_file():
            for line in p.read_text(encoding="utf-8").splitlines():
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    return ""


def _from_git(here: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(here), "describe", "--tags", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return pep440(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else ""


def version() -> str:
    here = Path(__file__).resolve().parent
    return os.environ.get("INFERBENCH_PY_VERSION") or _from_pkg_info(here) or _from_git(here) or FALLBACK


__version__ = version()
