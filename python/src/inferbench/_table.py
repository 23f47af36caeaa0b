"""The plugin's table of a session's benchmarks and its box plots (--inferbench-histogram).

In instruction mode the numbers are instructions per call instead of times.

One table, printed whether or not the session is saved or compared: per group (--inferbench-group-by)
a header and a row per test with MIN, MEDIAN, MEAN, MAX, IQR (p75 - p25) of the per-call time in one
unit per group, then ROUNDS and ITER (iterations per round), sorted by --inferbench-sort.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from inferbench import _timing

_UNITS = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))
COLUMNS = ("min", "median", "mean", "max", "iqr")
SORTS = (*COLUMNS, "stddev", "rounds", "name", "fullname")


class _Rec(Protocol):
    name: str
    fullname: str
    group: str | None
    params: dict[str, Any] | None
    data: list[float]
    iterations: int


def group_key(r: _Rec, by: str) -> str:
    """group_key is the group of record r under --inferbench-group-by BY (comma-separated keys)."""
    parts = []
    for key in (k.strip() for k in by.split(",") if k.strip()):
        if key == "group":
            parts.append(f"group {r.group}" if r.group else "")
        elif key == "name":
            parts.append(r.name)
        elif key == "fullname":
            parts.append(r.fullname)
        elif key == "func":
            parts.append(r.name.partition("[")[0])
        elif key == "fullfunc":
            parts.append(r.fullname.partition("[")[0])
        elif key == "param":
            parts.append(r.name.partition("[")[2].rstrip("]"))
        elif key.startswith("param:"):
            name = key.removeprefix("param:")
            parts.append(f"{name}={(r.params or {}).get(name)}")
        else:
            raise ValueError(f"--inferbench-group-by {by}: unknown key {key!r} (want group, name, fullname, func, fullfunc, param or param:NAME)")
    return ", ".join(p for p in parts if p)


def unit_for(seconds: float) -> tuple[str, float]:
    """unit_for is the largest unit in which seconds reads as 1 or more, and its scale."""
    for unit, scale in _UNITS:
        if seconds >= scale:
            return unit, scale
    return _UNITS[-1]


def _row_stats(r: _Rec) -> dict[str, Any]:
    st = _timing.stats(r.data, r.iterations)
    st["name"], st["fullname"] = r.name, r.fullname
    st["counted"] = getattr(r, "measure", "time") == "instructions"
    return st


# The columns --benchmark-columns may name, as the table heads them; ops is calls per second.
_HEADS = {"min": "MIN", "max": "MAX", "mean": "MEAN", "stddev": "STDDEV", "median": "MEDIAN", "iqr": "IQR",
          "outliers": "OUTLIERS", "ops": "OPS (1/s)", "rounds": "ROUNDS", "iterations": "ITER"}
_TIMES = {"min", "max", "mean", "stddev", "median", "iqr"}


def table(records: Iterable[_Rec], group_by: str = "group", sort: str = "min", columns: Sequence[str] | None = None, unit: str | None = None) -> str:
    """table is the session's table: a block per group, a row per test. columns are
    pytest-benchmark's names (--benchmark-columns; default MIN, MEDIAN, MEAN, MAX, IQR, ROUNDS,
    ITER) and unit its --benchmark-time-unit (ns, us, ms, s; default auto: one per group)."""
    if sort not in SORTS:
        raise ValueError(f"--inferbench-sort {sort}: want one of {', '.join(SORTS)}")
    cols = list(columns) if columns else [*COLUMNS, "rounds", "iterations"]
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault(group_key(r, group_by), []).append(_row_stats(r))
    out: list[str] = []
    for g in sorted(groups):
        rows = sorted(groups[g], key=lambda st: st[sort])
        # Instruction mode's rows are instructions per call, not seconds.
        if any(st["counted"] for st in rows):
            u, scale = "instructions", 1.0
        elif unit and unit != "auto":
            u, scale = unit, dict(_UNITS)[unit]
        else:
            u, scale = unit_for(min(st["min"] for st in rows))

        def cell(st: dict[str, Any], c: str) -> str:
            if c in _TIMES:
                return f"{st[c] / scale:.4g}"
            return f"{st[c]:.4g}" if c == "ops" else str(st[c])

        head = ["BENCHMARK", *(f"{_HEADS[c]} ({u})" if c in _TIMES else _HEADS[c] for c in cols)]
        body = [[st["name"], *(cell(st, c) for c in cols)] for st in rows]
        widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
        if out:
            out.append("")
        if g:
            out.append(g)
        for line in [head, *body]:
            cells = [line[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(line[1:], widths[1:])]
            out.append("  ".join(cells).rstrip())
    return "\n".join(out) + "\n"


def histogram_svg(records: Sequence[_Rec], group_by: str, prefix: str) -> list[Path]:
    """histogram_svg writes a box plot of each group's per-call times to PREFIX-GROUP.svg (the box
    p25 to p75 with the median, whiskers p1 to p99) and returns the paths."""
    groups: dict[str, list[_Rec]] = {}
    for r in records:
        groups.setdefault(group_key(r, group_by) or "all", []).append(r)
    paths = []
    for g, recs in sorted(groups.items()):
        qs = []
        for r in recs:
            s = sorted(r.data)
            qs.append((r.name, [_timing.quantile(s, q) for q in (0.01, 0.25, 0.5, 0.75, 0.99)]))
        hi = max(q[4] for _, q in qs) or 1.0
        unit, scale = unit_for(min(q[0] for _, q in qs))
        row_h, left, width = 28, 260, 520
        h = 40 + row_h * len(qs)
        x = lambda v: left + width * v / hi  # noqa: E731
        parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 40}" height="{h + 20}" font-family="sans-serif" font-size="12">',
                 f"<title>{html.escape(g)}: per-call time ({unit})</title>",
                 f'<text x="10" y="18">{html.escape(g)}: per-call time, {unit} (box p25-p75, line median, whiskers p1-p99)</text>']
        for i, (name, (p1, p25, p50, p75, p99)) in enumerate(qs):
            y = 30 + i * row_h
            parts += [f'<text x="10" y="{y + 16}">{html.escape(name[:38])}</text>',
                      f'<line x1="{x(p1):.1f}" x2="{x(p99):.1f}" y1="{y + 12}" y2="{y + 12}" stroke="#555"/>',
                      f'<rect x="{x(p25):.1f}" y="{y + 3}" width="{max(x(p75) - x(p25), 1):.1f}" height="18" fill="#9ecae1" stroke="#3182bd"/>',
                      f'<line x1="{x(p50):.1f}" x2="{x(p50):.1f}" y1="{y + 3}" y2="{y + 21}" stroke="#08306b" stroke-width="2"/>',
                      f'<text x="{x(p99) + 4:.1f}" y="{y + 16}" fill="#555">{p50 / scale:.4g}</text>']
        parts.append(f'<line x1="{left}" x2="{left + width}" y1="{h}" y2="{h}" stroke="#000"/>')
        parts.append(f'<text x="{left}" y="{h + 15}">0</text><text x="{left + width - 40}" y="{h + 15}">{hi / scale:.4g} {unit}</text>')
        parts.append("</svg>\n")
        path = Path(f"{prefix}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', g)}.svg")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(parts))
        paths.append(path)
    return paths
