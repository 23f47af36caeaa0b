"""The typed results: a run (run.json, docs/run.schema.json) and a comparison (compare --format json).

Each dataclass has the fields of one object of the JSON, named as the JSON names them. Decoding is
tolerant: keys this version does not know are ignored (the whole document stays in ``raw``), and
a field the document lacks takes its default. tests/test_schema.py holds the run types to the
schema: every property is a field and every field a property, required exactly when the field
has no default.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import types
import typing
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from inferbench.errors import ResultError

__all__ = [
    "BudgetCheck",
    "Comparison",
    "Config",
    "Interval",
    "IterationError",
    "Iterations",
    "Metric",
    "Row",
    "Run",
    "RunRef",
    "RunSummary",
    "Scenario",
    "Summary",
    "decode",
    "load",
]

# Fields that are not in the JSON document (the decoded document itself, where it came from).
_NOT_JSON = {"json": False}


@dataclass
class Interval:
    """Interval is a confidence interval: lo and hi at the given confidence (0.95 is 95%)."""

    lo: float | None
    hi: float | None
    confidence: float | None


@dataclass
class Summary:
    """Summary describes a metric's samples (docs/metrics.md, "Summary fields")."""

    n: int
    mean: float | None
    std: float
    min: float | None
    max: float | None
    median: float | None
    p25: float | None
    p75: float | None
    p90: float | None
    p95: float | None
    p99: float | None
    cv: float
    outliers: int
    p99_9: float | None = None
    median_ci: Interval | None = None
    approximate: bool = False
    warnings: list[str] = field(default_factory=list)


@dataclass
class Metric:
    """Metric is one measured quantity with its unit and the direction that is better.

    A distribution has a summary (and maybe raw samples); a single figure has a value.
    """

    unit: str
    better: str  # "lower", "higher" or "" (unknown: reported, never gated)
    value: float | None = None
    summary: Summary | None = None
    samples: list[float | None] = field(default_factory=list)
    note: str = ""

    @property
    def center(self) -> float | None:
        """center is the median of a distribution, else the value."""
        if self.summary is not None:
            return self.summary.median
        return self.value


@dataclass
class Iterations:
    """Iterations counts a scenario's warm-up, measured and failed iterations."""

    warmup: int
    measured: int
    failed: int


@dataclass
class IterationError:
    """IterationError is the error of one failed iteration."""

    iteration: int
    error: str


@dataclass
class Scenario:
    """Scenario is one benchmark with one set of parameters, and what it measured."""

    benchmark: str
    scenario: str
    subject: str
    status: str  # "ok", "failed" or "skipped"
    duration_s: float
    iterations: Iterations
    category: str = ""
    model: str = ""
    tags: list[str] = field(default_factory=list)
    source: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    skip_reason: str = ""
    warnings: list[str] = field(default_factory=list)
    profiles: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    started_at: datetime | None = None
    metrics: dict[str, Metric] = field(default_factory=dict)
    budgets: dict[str, str] = field(default_factory=dict)
    gate: list[str] = field(default_factory=list)
    # thresholds are the regression thresholds (percent) the scenario was gated with where it was
    # measured, by metric or kind: compare judges by them where its own say nothing.
    thresholds: dict[str, float] = field(default_factory=dict)
    # counted is instruction mode's identity: what the counts depend on besides the code.
    counted: dict[str, str] = field(default_factory=dict)
    errors: list[IterationError] = field(default_factory=list)
    environment: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """id is "benchmark/scenario", as the command line names a scenario."""
        return f"{self.benchmark}/{self.scenario}"


@dataclass
class Config:
    """Config is how the run was asked for: the command line, its folder, filters and --set."""

    args: list[str] = field(default_factory=list)
    dir: str = ""
    filters: dict[str, str] = field(default_factory=dict)
    set: dict[str, str] = field(default_factory=dict)


@dataclass
class RunSummary:
    """RunSummary counts the run's scenarios by status, and by their certificate's verdict
    (certificates: "pass", "warn", "fail"; empty without any)."""

    total: int
    succeeded: int
    failed: int
    skipped: int
    success_rate: float
    certificates: dict[str, int] = field(default_factory=dict)


@dataclass
class Run:
    """Run is one run.json: the environment, the configuration and every scenario."""

    schema: str
    id: str
    partial: bool
    started_at: datetime
    environment: dict[str, Any]
    config: Config
    summary: RunSummary
    scenarios: list[Scenario]
    finished_at: datetime | None = None
    shard: dict[str, Any] | None = None
    agent: dict[str, Any] | None = None
    merged: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata=_NOT_JSON)
    path: Path | None = field(default=None, compare=False, metadata=_NOT_JSON)

    @property
    def status(self) -> str:
        """status is "ok" when every scenario that ran succeeded and the run finished, else "failed" or "partial"."""
        if self.partial:
            return "partial"
        return "failed" if self.summary.failed else "ok"

    def scenario(self, name: str) -> Scenario:
        """scenario returns the scenario whose id ("benchmark/scenario") or benchmark is name."""
        for s in self.scenarios:
            if s.id == name:
                return s
        matches = [s for s in self.scenarios if s.benchmark == name]
        if len(matches) == 1:
            return matches[0]
        ids = ", ".join(s.id for s in self.scenarios) or "none"
        raise KeyError(f"{name!r}: {'several scenarios' if matches else 'no scenario'} of that name in run {self.id} (scenarios: {ids})")


@dataclass
class RunRef:
    """RunRef names a compared run."""

    id: str = ""
    label: str = ""
    started_at: datetime | None = None
    commit: str = ""


@dataclass
class Row:
    """Row is one metric of one scenario in a comparison (docs/metrics.md, "Comparison")."""

    benchmark: str = ""
    scenario: str = ""
    metric: str = ""
    unit: str = ""
    better: str = ""
    kind: str = ""
    primary: bool = False
    gated: bool = False
    old: float | None = None
    new: float | None = None
    old_ci: Interval | None = None
    new_ci: Interval | None = None
    old_n: int = 0
    new_n: int = 0
    delta_pct: float | None = None
    delta_ci_pct: Interval | None = None
    p: float | None = None
    q: float | None = None
    method: str = ""
    significant: bool = False
    threshold_pct: float | None = None
    verdict: str = ""
    warnings: list[str] = field(default_factory=list)


@dataclass
class BudgetCheck:
    """BudgetCheck is one budget of one scenario of the new run."""

    benchmark: str = ""
    scenario: str = ""
    metric: str = ""
    op: str = ""
    limit: float | None = None
    actual: float | None = None
    measured: bool = False
    ok: bool = False
    source: str = ""
    against: str = ""
    ci: Interval | None = None


@dataclass
class Comparison:
    """Comparison is the verdict of `inferbench compare OLD NEW`.

    exit_code is the command's: 0 no regression, 3 a regression or an exceeded budget (the
    command's other failures raise, nothing comparable among them: exit 1). text is the command's
    table when it was asked for.
    """

    old: RunRef = field(default_factory=RunRef)
    new: RunRef = field(default_factory=RunRef)
    alpha: float = 0.05
    rows: list[Row] = field(default_factory=list)
    budgets: list[BudgetCheck] = field(default_factory=list)
    only_old: list[str] = field(default_factory=list)
    only_new: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    regressions: int = 0
    improvements: int = 0
    unverified: int = 0
    # unknown counts the gated changes beyond their threshold that two sessions cannot tell from
    # the machine's run-to-run noise (compare --between-sessions); unresolved says which, the
    # smallest change the sessions could have seen, and what can tell.
    unknown: int = 0
    unresolved: str = ""
    # unknown_improvements counts the gated improvements beyond their threshold that two sessions
    # cannot tell either: not improvements, failing nothing (--strict neither); a warning names them.
    unknown_improvements: int = 0
    info: int = 0
    budgets_exceeded: int = 0
    no_evidence: str = ""
    exit_code: int = field(default=0, metadata=_NOT_JSON)
    text: str = field(default="", repr=False, metadata=_NOT_JSON)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata=_NOT_JSON)

    @property
    def failed(self) -> bool:
        """failed is true when the comparison fails a CI job (exit code 3)."""
        return self.exit_code != 0

    @property
    def regressed_rows(self) -> list[Row]:
        """regressed_rows are the rows whose verdict is a regression."""
        return [r for r in self.rows if r.verdict == "regression"]


T = TypeVar("T")

_FRACTION = re.compile(r"\.(\d+)")


def _datetime(s: str) -> datetime:
    # Go writes RFC 3339 with one to nine fractional digits (trailing zeros dropped) and Z; Python
    # 3.10's fromisoformat takes exactly 3 or 6, and keeps microseconds.
    s = _FRACTION.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), s, count=1)
    t = datetime.fromisoformat(s.replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def _convert(tp: Any, v: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if v is None:
            return None
        return _convert(args[0], v, where)
    if tp is Any:
        return v
    if dataclasses.is_dataclass(tp):
        if not isinstance(v, dict):
            raise ValueError(f"{where}: want an object, got {type(v).__name__}")
        return decode(typing.cast(type, tp), v, where)
    if origin is list:
        (item,) = typing.get_args(tp)
        return [_convert(item, x, f"{where}[{i}]") for i, x in enumerate(v or [])]
    if origin is dict:
        _, item = typing.get_args(tp)
        return {k: _convert(item, x, f"{where}.{k}") for k, x in (v or {}).items()}
    if tp is datetime:
        return _datetime(v)
    if tp is float:
        if v is None:
            return math.nan
        return float(v)
    if tp is Path:
        return Path(v)
    return v


def decode(cls: type[T], d: dict[str, Any], where: str = "") -> T:
    """decode builds the dataclass cls from the JSON object d, ignoring keys it does not know."""
    hints = typing.get_type_hints(cls)
    kw: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.metadata.get("json") is False or f.name not in d:
            continue
        kw[f.name] = _convert(hints[f.name], d[f.name], f"{where}.{f.name}" if where else f.name)
    try:
        return cls(**kw)
    except TypeError as e:
        missing = [f.name for f in dataclasses.fields(cls) if f.name not in kw and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]  # type: ignore[arg-type]
        raise ValueError(f"{where or cls.__name__}: missing {', '.join(missing)}") from e


def parse_run(data: str | bytes, name: str = "run.json") -> Run:
    """parse_run decodes the text of a run.json; a text that is not one raises ResultError (a
    ValueError)."""
    try:
        d = json.loads(data)
    except ValueError as e:
        raise ResultError(f"{name}: not JSON: {e}") from None
    if not isinstance(d, dict) or not str(d.get("schema", "")).startswith("inferbench/run/"):
        raise ResultError(f"{name}: not an inferbench run.json (no \"schema\": \"inferbench/run/v1\"; pytest-benchmark and other tools' files go through inferbench.import_results)")
    try:
        r = decode(Run, d)
    except ValueError as e:
        raise ResultError(f"{name}: {e}") from e
    r.raw = d
    return r


def load(path: str | Path) -> Run:
    """load reads a run.json, or the run.json of a run folder (benchmark_results/latest). A path
    with no run.json raises ResultError (a ValueError) saying where it looked."""
    p = Path(path)
    if p.is_dir():
        p = p / "run.json"
    try:
        data = p.read_bytes()
    except OSError as e:
        raise ResultError(f"{p}: {e.strerror or e} (give a run.json or a run folder, e.g. benchmark_results/latest)") from None
    r = parse_run(data, str(p))
    r.path = p
    return r


def parse_comparison(data: str | bytes, exit_code: int = 0, text: str = "") -> Comparison:
    """parse_comparison decodes `inferbench compare --format json`."""
    d = json.loads(data)
    c = decode(Comparison, d)
    c.raw, c.exit_code, c.text = d, exit_code, text
    return c
