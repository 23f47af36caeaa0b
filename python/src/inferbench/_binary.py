"""Where the inferbench binary is, and running it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from pathlib import Path

EXE = "inferbench.exe" if sys.platform == "win32" else "inferbench"


class BinaryNotFound(FileNotFoundError):
    """BinaryNotFound: no inferbench binary in this environment, INFERBENCH_BINARY or PATH."""


def _scripts_dirs() -> list[Path]:
    dirs = [sysconfig.get_path("scripts")]
    try:
        dirs.append(sysconfig.get_path("scripts", scheme=sysconfig.get_preferred_scheme("user")))
    except KeyError:
        pass
    # pip install --target DIR puts the package in DIR and the scripts in DIR/bin.
    dirs.append(str(Path(__file__).resolve().parent.parent / "bin"))
    return [Path(d) for d in dirs if d]


def find_binary() -> Path:
    """find_binary returns the inferbench binary this package drives.

    In order: $INFERBENCH_BINARY; the one the platform wheel installed into this environment's
    scripts (bin/, Scripts\\ on Windows) or the user's; the first inferbench on PATH (the
    pure-Python wheel, or a binary built with Go).
    """
    env = os.environ.get("INFERBENCH_BINARY")
    if env:
        p = Path(env)
        if not p.is_file():
            raise BinaryNotFound(f"INFERBENCH_BINARY={env}: no such file")
        return p
    for d in _scripts_dirs():
        p = d / EXE
        if p.is_file():
            return p
    found = shutil.which(EXE)
    if found:
        return Path(found)
    raise BinaryNotFound(
        "inferbench binary not found in this environment's scripts or on PATH "
        "(install a platform wheel of pyinferbench, set INFERBENCH_BINARY, or `go install ./cmd/inferbench`)"
    )


def execute(
    args: Sequence[str],
    *,
    binary: str | os.PathLike[str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """execute runs the binary with args and returns its exit code, stdout and stderr."""
    exe = Path(binary) if binary is not None else find_binary()
    full_env = None
    if env is not None:
        full_env = dict(os.environ)
        full_env.update(env)
    return subprocess.run(
        [str(exe), *args],
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=timeout,
        check=False,
    )
