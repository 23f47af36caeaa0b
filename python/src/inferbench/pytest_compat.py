"""pytest-benchmark compatibility of the pytest plugin: its 34 ``--benchmark-*`` flags (5.3.1) and
its marker's arguments.

When pytest-benchmark is not active, each of its flags is accepted. Fourteen have an inferbench
option of the same meaning and are that option's second name (pytest_plugin._OPTIONS); the others
are registered here under pytest-benchmark's own dest (``benchmark_warmup``...), and ``apply``
turns those with a meaning here into inferbench's options (--benchmark-save NAME is
--inferbench-save NAME, --benchmark-compare is --inferbench-compare latest, reported and not
gating unless --benchmark-compare-fail says so, ...), and warns once, naming the flag, for each
of those without one (IGNORED says why). pytest-benchmark 5.3.1 registers no ini option: its
flags in ``addopts`` are read like the command line's. docs/pytest.md has the table.
"""

from __future__ import annotations

import argparse
import platform
import re
from typing import Any

import pytest


class InferbenchWarning(pytest.PytestWarning):
    """InferbenchWarning: the plugin changed or ignored something the user asked for."""


def _warmup_kind(s: str) -> str:
    """_warmup_kind is pytest-benchmark's parse_warmup: on, off or auto."""
    s = s.lower().strip()
    if s in ("on", "true", "yes", ""):
        return "on"
    if s in ("off", "false", "no"):
        return "off"
    if s == "auto":
        return "auto"
    raise argparse.ArgumentTypeError(f"could not parse value: {s!r} (want auto, on or off)")


def _fraction(s: str) -> float:
    v = float(s)
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"{s}: want a fraction between 0 and 1")
    return v


# pytest-benchmark's table columns (--benchmark-columns).
COLUMNS = ("min", "max", "mean", "stddev", "median", "iqr", "outliers", "ops", "rounds", "iterations")


def _columns(s: str) -> list[str]:
    cols = [c.strip() for c in s.lower().split(",") if c.strip()]
    if bad := [c for c in cols if c not in COLUMNS]:
        raise argparse.ArgumentTypeError(f"invalid column name(s): {', '.join(bad)} (want {', '.join(COLUMNS)})")
    return cols


# The pytest-benchmark flags that are not a second name of an inferbench option: (flag,
# addoption's arguments as pytest-benchmark's, with its dest).
FLAGS: list[tuple[str, dict[str, Any]]] = [
    ("--benchmark-precision", dict(type=_fraction, default=None, metavar="FRACTION",
     help="pytest-benchmark's: rounds until the relative margin of error of the mean (at --benchmark-confidence) is below FRACTION, within --benchmark-min-rounds and --benchmark-max-time")),
    ("--benchmark-confidence", dict(type=_fraction, default=0.99, metavar="FRACTION", help="pytest-benchmark's: the confidence of --benchmark-precision (default 0.99)")),
    ("--benchmark-calibration-precision", dict(type=int, default=None, metavar="NUM", help="pytest-benchmark's: accepted, ignored (inferbench calibrates a round to 100 grains of its timer)")),
    ("--benchmark-warmup", dict(nargs="?", const="on", default="auto", type=_warmup_kind, metavar="KIND",
     help="pytest-benchmark's: on runs warm-up rounds of up to --benchmark-warmup-iterations calls after calibration; off none; auto on PyPy only (inferbench always warms up by time first: --inferbench-warmup-time)")),
    ("--benchmark-warmup-iterations", dict(type=int, default=100000, metavar="NUM", help="pytest-benchmark's: the most calls of the warm-up rounds (default 100000)")),
    ("--benchmark-enable", dict(action="store_true", default=False, help="pytest-benchmark's: benchmarks on, whatever --benchmark-disable says")),
    ("--benchmark-save", dict(default=None, metavar="NAME", help="pytest-benchmark's: --inferbench-save NAME (an inferbench run under --inferbench-output-dir)")),
    ("--benchmark-autosave", dict(action="store_true", default=False, help="pytest-benchmark's: --inferbench-save")),
    ("--benchmark-save-data", dict(action="store_true", default=False, help="pytest-benchmark's: the saved run keeps every round (--inferbench-max-samples 0)")),
    ("--benchmark-compare", dict(nargs="?", const="latest", default=None, metavar="RUN",
     help="pytest-benchmark's: compare with RUN (default latest: the last saved run) and print the comparison; it fails the session only with --benchmark-compare-fail")),
    ("--benchmark-compare-fail", dict(nargs="+", default=None, action="extend", metavar="EXPR",
     help="pytest-benchmark's: fail on a regression of STAT:PERCENT% (min:5%): inferbench's gate with that threshold (the median, significant changes only)")),
    ("--benchmark-cprofile-loops", dict(default=None, metavar="LOOPS", help="pytest-benchmark's: accepted, ignored (one calibrated round is profiled)")),
    ("--benchmark-cprofile-dump", dict(nargs="?", const="benchmark_cprofile", default=None, metavar="PREFIX",
     help="pytest-benchmark's: write each profile (--benchmark-cprofile) to PREFIX-TEST.prof")),
    ("--benchmark-storage", dict(default=None, metavar="URI", help="pytest-benchmark's: accepted, ignored (runs are saved under --inferbench-output-dir, or --inferbench-store)")),
    ("--benchmark-netrc", dict(nargs="?", const="~/.netrc", default=None, metavar="FILE", help="pytest-benchmark's: accepted, ignored (no elasticsearch storage)")),
    ("--benchmark-verbose", dict(action="store_true", default=False, help="pytest-benchmark's: accepted, ignored")),
    ("--benchmark-quiet", dict(action="store_true", default=False, help="pytest-benchmark's: no table")),
    ("--benchmark-columns", dict(type=_columns, default=None, metavar="LABELS", help=f"pytest-benchmark's: the table's columns, of {', '.join(COLUMNS)}")),
    ("--benchmark-name", dict(default=None, choices=["short", "normal", "long", "trial"], metavar="FORMAT", help="pytest-benchmark's: accepted, ignored (the table names tests by their name)")),
    ("--benchmark-time-unit", dict(default=None, choices=["ns", "us", "ms", "s", "auto"], metavar="UNIT", help="pytest-benchmark's: the table's time unit (default auto)")),
]

# The flags above that have no meaning here, and why: each warns once when given.
IGNORED = {
    "calibration_precision": "inferbench calibrates a round to last --inferbench-min-time and 100 grains of its timer",
    "cprofile_loops": "one calibrated round of the benchmark is profiled",
    "storage": "runs are saved as run folders under --inferbench-output-dir (and in --inferbench-store), not in pytest-benchmark's storage",
    "netrc": "there is no elasticsearch storage",
    "verbose": "the plugin prints its table and one line per saved or compared run",
    "name": "the table names each test by its name",
}

# pytest-benchmark's --benchmark-cprofile columns, as pstats sort keys.
CPROFILE_SORTS = {"ncalls_recursion": "ncalls", "tottime_per": "tottime", "cumtime_per": "cumtime", "function_name": "name"}


def register(group: Any) -> None:
    """register adds the pytest-benchmark flags of FLAGS (pytest-benchmark is not active)."""
    for flag, kw in FLAGS:
        group.addoption(flag, dest=flag.removeprefix("--").replace("-", "_"), **kw)


def _given(config: pytest.Config, name: str) -> Any:
    return config.getoption("benchmark_" + name, None)


def apply(config: pytest.Config, registered: bool) -> list[str]:
    """apply turns the pytest-benchmark flags given (FLAGS, when registered here: pytest-benchmark
    is not active) into inferbench's options, and returns a warning for each flag given that has
    no meaning here."""
    o = config.option
    if not registered or not hasattr(o, "benchmark_enable"):
        return []  # pytest-benchmark's own flags: it is active
    warns = []
    for name, why in IGNORED.items():  # their defaults are None (False): given, they are not
        if _given(config, name) not in (None, False):
            warns.append(f"inferbench: --benchmark-{name.replace('_', '-')} is pytest-benchmark's and is ignored: {why}")
    if o.benchmark_enable:
        o.inferbench_disable = False
    if (name := o.benchmark_save) and not o.inferbench_save:
        o.inferbench_save = name
    if o.benchmark_autosave and not o.inferbench_save:
        o.inferbench_save = "pytest"
    if o.benchmark_save_data and o.inferbench_max_samples is None:
        o.inferbench_max_samples = 0
    if o.benchmark_compare and not o.inferbench_compare:
        o.inferbench_compare = o.benchmark_compare
        o.inferbench_report_only = not o.benchmark_compare_fail
    if o.benchmark_compare_fail:
        # pytest-benchmark fails on the change it is given, whatever the machine did between the
        # two sessions: a change the sessions cannot tell from the machine's noise fails too.
        o.inferbench_strict = True
    for expr in o.benchmark_compare_fail or []:
        m = re.fullmatch(r"(min|max|mean|median|stddev|iqr):([0-9.]+)%", expr.strip())
        if not m:
            warns.append(f"inferbench: --benchmark-compare-fail {expr}: only STAT:PERCENT% is read (min:5%); a change in seconds is ignored")
            continue
        o.inferbench_threshold = [*o.inferbench_threshold, f"latency_ms={m.group(2)}"]
        if m.group(1) != "median":
            warns.append(f"inferbench: --benchmark-compare-fail {expr}: the gate is the median per-call time, failing on a significant change beyond {m.group(2)}%, not the {m.group(1)}")
    if o.inferbench_cprofile in CPROFILE_SORTS:
        o.inferbench_cprofile = CPROFILE_SORTS[o.inferbench_cprofile]
    return warns


def warmup_iterations(config: pytest.Config) -> tuple[int | None, int | None]:
    """warmup_iterations is (warm-up rounds, warm-up calls) of --benchmark-warmup: (None, N) for
    on (rounds of up to N calls), (0, None) for off, (None, None) when it says nothing."""
    kind = _given(config, "warmup")
    if kind == "auto":
        kind = "on" if platform.python_implementation() == "PyPy" else None
    if kind == "on":
        return None, _given(config, "warmup_iterations")
    if kind == "off":
        return 0, None
    return None, None


# pytest-benchmark's marker arguments: those read into Options (with their name there), and
# those without an equivalent (ignored, with a note once per session).
MARKER_SAME = {"group": "group", "min_rounds": "min_rounds", "max_time": "max_time", "min_time": "min_time", "timer": "timer",
               "disable_gc": "disable_gc", "warmup_iterations": "warmup_iterations", "precision": "precision", "confidence": "confidence"}
MARKER_NOTE = {"calibration_precision": "calibration makes a round last --inferbench-min-time and 100 grains of the timer"}


def marker_options(kwargs: dict[str, Any], o: Any, note: Any) -> None:
    """marker_options sets on Options o what @pytest.mark.benchmark(**kwargs) says, and notes
    what it ignores."""
    for k, v in kwargs.items():
        if k in MARKER_SAME:
            setattr(o, MARKER_SAME[k], v)
        elif k == "warmup":
            if not v:
                o.warmup, o.warmup_iterations = 0, None
            elif o.warmup_iterations is None:
                o.warmup_iterations = 100000
        elif k == "cprofile":
            o.cprofile = CPROFILE_SORTS.get(v, v) if isinstance(v, str) else ("cumtime" if v else None)
        else:
            note(f"@pytest.mark.benchmark({k}=...) is ignored: {MARKER_NOTE.get(k, 'unknown to inferbench')}")
