"""The pytest plugin's files: a session's temporary folders, the output folder's latest link,
and the values of a test as JSON can hold them."""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

# The temporary folders of a session's save and comparison: inferbench-pytest-PID-..., so that a
# session killed while it saves (SIGKILL: no finally runs) leaves a folder that the next session
# removes, its process being gone (remove_stale_temp).
TEMP_PREFIX = "inferbench-pytest-"


def remove_stale_temp() -> None:
    """remove_stale_temp removes the temporary folders of sessions whose process has ended. Not on
    Windows, where os.kill(pid, 0) is no liveness check."""
    if sys.platform == "win32":
        return
    try:
        entries = list(Path(tempfile.gettempdir()).glob(TEMP_PREFIX + "*"))
    except OSError:
        return
    for d in entries:
        pid = d.name[len(TEMP_PREFIX):].partition("-")[0]
        if not pid.isdigit() or int(pid) == os.getpid() or not d.is_dir() or d.is_symlink():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # alive (another session saving now)
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError, OSError):
            continue  # alive under another user, or no answer: leave it
        shutil.rmtree(d, ignore_errors=True)


_ADDRESS = re.compile(r" at 0x[0-9A-Fa-f]+")


def saveable(v: Any, depth: int = 0) -> Any:
    """saveable is v as JSON can hold it: a value JSON cannot encode (an enum, a class, a
    function) is "UNSERIALIZABLE[repr]" as pytest-benchmark writes it, without the object's
    address (it would make the test another one in each session); a non-finite float is its
    repr; a mapping's keys are text."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if v == v and v not in (float("inf"), float("-inf")) else repr(v)
    if depth < 32 and isinstance(v, dict):
        return {k if isinstance(k, str) else str(k): saveable(x, depth + 1) for k, x in v.items()}
    if depth < 32 and isinstance(v, (list, tuple)):
        return [saveable(x, depth + 1) for x in v]
    try:
        text = repr(v)
    except Exception as e:  # noqa: BLE001 -- a broken __repr__ must not lose the session
        text = f"<{type(v).__qualname__}: repr failed: {type(e).__name__}>"
    return f"UNSERIALIZABLE[{_ADDRESS.sub('', text)}]"


def safe_name(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name) or "pytest"


def link_latest(base: Path, rid: str) -> None:
    """link_latest points base/latest at the run folder, as inferbench run does (not on Windows)."""
    if sys.platform == "win32":
        return
    link = base / "latest"
    tmp = base / f".latest-{rid}"
    try:
        os.symlink(rid, tmp)
        os.replace(tmp, link)
    except OSError:
        tmp.unlink(missing_ok=True)
