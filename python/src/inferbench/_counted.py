"""Instruction mode of the pytest plugin (--inferbench-measure instructions): each round's
instructions counted by valgrind's callgrind instead of its time timed.

The session runs under callgrind with collection off (`--collect-atstart=no`). A round runs inside
a ctypes callback, so inside CPython's `_CallPythonObject`; callgrind collects only while in that
function (`--toggle-collect`) and writes the round's counts to a file when it returns
(`--dump-after`), which the plugin reads before the next round. Counts do not move with the
machine's load: they change with the code, and with what the count depends on besides the code
(valgrind's version, the CPU's features, the simulated cache, the interpreter), which the run
records as the scenario's identity (`counted`) and compare refuses to compare across.
"""

from __future__ import annotations

import ctypes
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

MODE = "instructions"
ENV = "INFERBENCH_PYTEST_COUNTED"  # the folder of callgrind's files, set in the session under callgrind
ENV_VALGRIND = "INFERBENCH_PYTEST_VALGRIND"  # valgrind's version, for the identity
# The round's boundary: the C function a ctypes callback runs Python code in.
BOUNDARY = "_CallPythonObject"
# As inferbench's own instruction mode (internal/base/callgrind): a fixed simulated cache, so a count
# does not depend on the caches of the machine it was made on, and the CPU flags code paths are
# chosen by.
CACHE = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"]
FEATURES = ["sse4_2", "avx", "avx2", "fma", "bmi2", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "amx_tile", "sha_ni", "aes", "neon", "asimd", "sve"]
L1_MISS_CYCLES, LL_MISS_CYCLES = 10, 100
# Rounds of a counted benchmark unless --inferbench-rounds says otherwise, and the instructions a
# round aims at: its calls are enough that the callback's own instructions (a few thousand) are a
# small part, and they are chosen from a count, not a time, so that the same code gets the same
# iterations (a per-call count includes 1/iterations of that overhead).
ROUNDS = 9
ROUND_INSTRUCTIONS = 5_000_000


class Unavailable(Exception):
    """Unavailable: instruction mode cannot run here; the message says why and what to do."""


def find_valgrind() -> tuple[str, str]:
    """find_valgrind returns valgrind's path and version."""
    if sys.platform not in ("linux", "darwin") and not sys.platform.startswith("freebsd"):
        raise Unavailable(f"--inferbench-measure instructions needs valgrind, which does not run on {sys.platform}; measure time (drop the option)")
    path = shutil.which("valgrind")
    if not path:
        raise Unavailable("--inferbench-measure instructions needs valgrind, and none is on PATH: install it (Debian and Ubuntu: sudo apt-get install valgrind), or measure time (drop the option)")
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    return path, out.removeprefix("valgrind-") or "unknown"


def argv(valgrind: str, out_dir: Path) -> list[str]:
    """argv is the command line that runs this pytest session again under callgrind."""
    return [valgrind, "--tool=callgrind", "-q", "--cache-sim=yes", *CACHE, f"--callgrind-out-file={out_dir}/cg.%p",
            "--collect-atstart=no", f"--toggle-collect={BOUNDARY}", f"--dump-after={BOUNDARY}",
            "--", sys.executable, *sys.orig_argv[1:]]


def environ(out_dir: Path, version: str) -> dict[str, str]:
    """environ is the session's environment under callgrind: string hashes fixed (a random seed
    changes the instructions dictionaries execute) unless PYTHONHASHSEED is set."""
    env = dict(os.environ)
    env[ENV] = str(out_dir)
    env[ENV_VALGRIND] = version
    env.setdefault("PYTHONHASHSEED", "0")
    return env


def identity() -> dict[str, str]:
    """identity is what a count depends on besides the code (the keys of inferbench's own
    instruction mode, and the interpreter)."""
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower(), platform.machine())
    ident = {"valgrind": os.environ.get(ENV_VALGRIND, "unknown"), "arch": arch, "cache": " ".join(CACHE),
             "python": f"{platform.python_implementation()} {platform.python_version()}"}
    vendor = model = ""
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                k, v = k.strip(), v.strip()
                if k in ("vendor_id", "CPU implementer") and not vendor:
                    vendor = v
                elif k == "model name" and not model:
                    model = v
                elif k in ("flags", "Features") and not flags:
                    flags = set(v.split())
    except OSError:
        pass
    if model:
        ident["cpu"] = f"{vendor} {model}".strip()
    if flags:
        ident["cpu_features"] = " ".join(f for f in FEATURES if f in flags)
    return ident


def read_counts(path: Path) -> dict[str, int]:
    """read_counts returns the events of a callgrind file: its totals: line (else summary:) by
    the names of its events: line."""
    events: list[str] = []
    totals: list[str] = []
    summary: list[str] = []
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("totals:"):
                totals = line.split()[1:]
            elif line.startswith("summary:"):
                summary = line.split()[1:]
    vals = totals or summary
    if not events or not vals:
        raise RuntimeError(f"{path}: not a callgrind file with totals")
    return {e: int(v) for e, v in zip(events, vals)}


def est_cycles(ev: dict[str, int]) -> int:
    """est_cycles is KCachegrind's estimate: Ir + 10 × L1 misses + 100 × last-level misses."""
    l1 = ev.get("I1mr", 0) + ev.get("D1mr", 0) + ev.get("D1mw", 0)
    ll = ev.get("ILmr", 0) + ev.get("DLmr", 0) + ev.get("DLmw", 0)
    return ev.get("Ir", 0) + L1_MISS_CYCLES * l1 + LL_MISS_CYCLES * ll


class Counter:
    """Counter counts the instructions of one call of a function, in the session under callgrind."""

    def __init__(self, out_dir: Path) -> None:
        self.dir = out_dir
        self.proto = ctypes.CFUNCTYPE(ctypes.c_int)
        self.warm = False

    def count(self, body: Callable[[], Any]) -> dict[str, int]:
        """count runs body once inside the counted boundary and returns callgrind's events of it."""
        failed: list[BaseException] = []

        def run() -> int:
            try:
                body()
            except BaseException as e:  # a ctypes callback cannot raise: carried out, raised below
                failed.append(e)
            return 0

        if not self.warm:
            # The first callback of a process runs code no later one does (ctypes sets itself
            # up): an empty count takes it, so the first round is like the others.
            self.warm = True
            self.count(lambda: None)
        before = set(os.listdir(self.dir))
        self.proto(run)()
        if failed:
            raise failed[0]
        new = [n for n in os.listdir(self.dir) if n not in before and n.rsplit(".", 1)[-1].isdigit()]
        if not new:
            raise RuntimeError(f"callgrind wrote no count for the round: is this session under callgrind with --dump-after={BOUNDARY} "
                               f"(and does this Python's _ctypes have that symbol)? Measure time instead (drop --inferbench-measure instructions)")
        last = max(new, key=lambda n: int(n.rsplit(".", 1)[-1]))
        ev = read_counts(self.dir / last)
        for n in new:
            (self.dir / n).unlink(missing_ok=True)
        return ev


def iterations_for(counter: Counter, call: Callable[[], Any]) -> int:
    """iterations_for counts one call (after the warm-up) and returns the calls a round needs to
    reach ROUND_INSTRUCTIONS."""
    one = counter.count(call).get("Ir", 0)
    return max(1, min(1_000_000, -(-ROUND_INSTRUCTIONS // max(one, 1))))
