"""Where the inferbench binary is, and running it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from pathlib import Path

from inferbench.errors import BinaryNotFound, CommandTimeout, UsageError

EXE = "inferbench.exe" if sys.platform == "win32" else "inferbench"
_HINT = "install a platform wheel of pyinferbench, set INFERBENCH_BINARY to a built binary, or `make build` / `go install ./cmd/inferbench` in a checkout"


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
        return usable(Path(env), f"INFERBENCH_BINARY={env}")
    for d in _scripts_dirs():
        p = d / EXE
        if p.is_file():
            return p
    found = shutil.which(EXE)
    if found:
        return Path(found)
    raise BinaryNotFound(f"inferbench binary not found in this environment's scripts ({', '.join(str(d) for d in _scripts_dirs())}) or on PATH ({_HINT})")


def usable(p: Path, what: str) -> Path:
    """usable returns p when it is an executable file, else raises BinaryNotFound saying why;
    what names where p came from (binary=..., INFERBENCH_BINARY=...)."""
    if not p.exists():
        raise BinaryNotFound(f"{what}: no such file ({_HINT})")
    if not p.is_file():
        raise BinaryNotFound(f"{what}: not a file (a folder? give the binary's path, e.g. bin/inferbench)")
    if sys.platform != "win32" and not os.access(p, os.X_OK):
        raise BinaryNotFound(f"{what}: not executable (chmod +x {p})")
    return p


def execute(
    args: Sequence[str],
    *,
    binary: str | os.PathLike[str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """execute runs the binary with args and returns its exit code, stdout and stderr.

    A binary that cannot run (missing, not executable, not a program for this machine) raises
    BinaryNotFound, a command that runs past timeout seconds CommandTimeout (it is killed)."""
    what = f"binary={binary}" if binary is not None else ""
    exe = usable(Path(binary), what) if binary is not None else find_binary()
    if not what:
        what = f"INFERBENCH_BINARY={exe}" if os.environ.get("INFERBENCH_BINARY") else str(exe)
    full_env = None
    if env is not None:
        full_env = dict(os.environ)
        full_env.update(env)
    try:
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
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode("utf-8", "replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        raise CommandTimeout(f"inferbench {args[0] if args else ''}: did not finish in {timeout:g} s (timeout={timeout:g}) and was stopped; "
                             "give a larger timeout, or fewer iterations", None, list(args), err) from None
    except OSError as e:  # exec failed: a file of another platform, a script without its interpreter
        if cwd is not None and not Path(cwd).is_dir():
            raise UsageError(f"cwd={cwd}: no such folder", None, list(args)) from None
        raise BinaryNotFound(f"{what}: cannot run it: {e.strerror or e} (is it the inferbench binary for this machine? {_HINT})", None, list(args)) from None
