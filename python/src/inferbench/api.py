"""The Python API: run, compare, load and import, each a call of the inferbench binary."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Union

from inferbench._binary import execute
from inferbench.errors import EXIT_REGRESSION, InferbenchError, RegressionError, ResultError, UsageError, error_for
from inferbench.results import Comparison, Run, parse_comparison, parse_run

PathLike = Union[str, "os.PathLike[str]"]


def _many(flag: str, values: str | Sequence[str] | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    for v in values:
        out += [flag, str(v)]
    return out


def _sets(values: Mapping[str, Any] | Sequence[str] | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, Mapping):
        values = [f"{k}={v}" for k, v in values.items()]
    return _many("--set", values)


def _opt(flag: str, value: Any) -> list[str]:
    return [] if value is None else [flag, str(value)]


def run(
    paths: PathLike | Sequence[PathLike] = (),
    *,
    include: str | Sequence[str] | None = None,
    exclude: str | Sequence[str] | None = None,
    category: str | Sequence[str] | None = None,
    model: str | Sequence[str] | None = None,
    tag: str | Sequence[str] | None = None,
    framework: str | None = None,
    batch_sizes: Sequence[int] | None = None,
    set: Mapping[str, Any] | Sequence[str] | None = None,  # noqa: A002 (the command line's --set)
    iterations: int | None = None,
    warmup: int | None = None,
    exec: str | None = None,  # noqa: A002 (the command line's --exec)
    enable_mock: bool = False,
    output_dir: PathLike | None = None,
    store: PathLike | None = None,
    no_store: bool = False,
    baseline: str | None = None,
    extra_args: Sequence[str] = (),
    cwd: PathLike | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    binary: PathLike | None = None,
    check: bool = True,
) -> Run:
    """run runs `inferbench run` and returns the run it wrote (run.json).

    The options are the command line's: paths to discover definitions under (default the current
    folder), the selection (include/exclude globs, category, model, tag), the quick runs
    (framework with model and batch_sizes, exec), the load (set, iterations, warmup) and where the
    results go (output_dir, default benchmark_results; store, default $INFERBENCH_STORE or
    .inferbench/history.db; no_store). extra_args go to the command line as they are.

    Exit codes: 0 returns the run; 1 (a failed scenario, an error) raises InferbenchError, 2 (bad
    options or definitions) UsageError, 3 (a regression against baseline, an exceeded budget)
    RegressionError, each with the command's whole message (a bad definition's file:line:col
    and hint), the exit code and the run when one was written; with check=False a written run is
    returned instead. A binary that cannot run raises BinaryNotFound, a run past timeout seconds
    CommandTimeout.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    args = ["run", *(os.fspath(p) for p in paths)]
    args += _many("--include", include) + _many("--exclude", exclude)
    for flag, v in (("--category", category), ("--model", model), ("--tag", tag)):
        if v is not None:
            args += [flag, v if isinstance(v, str) else ",".join(v)]
    args += _opt("--framework", framework)
    if batch_sizes:
        args += ["--batch-sizes", ",".join(str(b) for b in batch_sizes)]
    args += _sets(set) + _opt("--iterations", iterations) + _opt("--warmup", warmup) + _opt("--exec", exec)
    if enable_mock:
        args.append("--enable-mock")
    args += _opt("--output-dir", os.fspath(output_dir) if output_dir is not None else None)
    args += _opt("--store", os.fspath(store) if store is not None else None)
    if no_store:
        args.append("--no-store")
    args += _opt("--baseline", baseline)
    args += [*extra_args, "--format", "json"]
    p = execute(args, binary=binary, cwd=cwd, env=env, timeout=timeout)
    r = _run_from(p.stdout, output_dir, cwd)
    if p.returncode != 0 and (check or r is None):
        raise error_for(p.returncode, args, p.stderr, r)
    if r is None:
        raise InferbenchError(f"inferbench run printed no run (stdout starts {p.stdout[:80]!r}): is {binary or 'the binary'} inferbench?", p.returncode, args, p.stderr)
    return r


def _run_from(stdout: str, output_dir: PathLike | None, cwd: PathLike | None) -> Run | None:
    """_run_from returns the run `run --format json` printed, with the path of its run.json."""
    text = stdout.lstrip()
    if not text.startswith("{"):
        return None
    try:
        doc, _ = json.JSONDecoder().raw_decode(text)
        r = parse_run(json.dumps(doc), "inferbench run's output")
    except ValueError:
        return None
    base = Path(cwd or ".") / (output_dir or "benchmark_results")
    p = base / r.id / "run.json"
    if p.is_file():
        r.path = p
    return r


def compare(
    base: PathLike | Run,
    head: PathLike | Run,
    *,
    threshold: Mapping[str, float] | Sequence[str] | None = None,
    gate: str | Sequence[str] | None = None,
    alpha: float | None = None,
    thresholds_file: PathLike | None = None,
    budget_file: PathLike | None = None,
    store: PathLike | None = None,
    results_dir: PathLike | None = None,
    text: bool = False,
    extra_args: Sequence[str] = (),
    cwd: PathLike | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    binary: PathLike | None = None,
) -> Comparison:
    """compare runs `inferbench compare BASE HEAD --format json` and returns the verdict.

    base and head are what the command takes (a run.json, a run folder, a run id, "latest",
    "baseline:NAME") or a Run loaded from a file. threshold overrides the thresholds, as
    {"latency": 10} or ["resnet:memory=30"]; gate names more metrics that fail it (compare
    --gate, e.g. ["latency_ms.p99"]). The verdict's exit_code is the command's: 0 no regression,
    3 a regression or an exceeded budget (returned, not raised: it is compare's answer). Exit 1
    raises InferbenchError: a bad file, and nothing comparable (no scenario or metric in common:
    a verdict needs evidence); exit 2 UsageError: bad flags, a run that is not there. With text=True
    the verdict's text is the command's table, from the same comparison.
    """
    refs = [_ref(base), _ref(head)]
    args = ["compare", *refs]
    if isinstance(threshold, Mapping):
        threshold = [f"{k}={v}" for k, v in threshold.items()]
    args += _many("--threshold", threshold) + _many("--gate", gate) + _opt("--alpha", alpha)
    args += _opt("--thresholds-file", thresholds_file) + _opt("--budget-file", budget_file)
    args += _opt("--store", store) + _opt("--results-dir", results_dir) + list(extra_args)
    with tempfile.TemporaryDirectory(prefix="inferbench-compare-") as tmp:
        out = Path(tmp) / "compare.json"
        # One comparison: the JSON, and with text=True the table of the same one.
        fmt = ["--format", "text", "--json", str(out)] if text else ["--format", "json", "-o", str(out)]
        p = execute([*args, *fmt], binary=binary, cwd=cwd, env=env, timeout=timeout)
        if p.returncode not in (0, EXIT_REGRESSION) or not out.is_file():
            raise error_for(p.returncode or 1, args, p.stderr)
        try:
            return parse_comparison(out.read_text(encoding="utf-8"), p.returncode, p.stdout if text else "")
        except ValueError as e:
            raise ResultError(f"inferbench compare wrote a comparison this package cannot read: {e}", p.returncode, args, p.stderr) from None


def _ref(r: PathLike | Run) -> str:
    if isinstance(r, Run):
        if r.path is None:
            raise UsageError(f"run {r.id} has no file: compare takes runs loaded from or written to a run.json (inferbench.load(path), or the Run inferbench.run returned)")
        return str(r.path)
    return os.fspath(r)


def import_results(
    files: PathLike | Sequence[PathLike],
    *,
    store: PathLike | None = None,
    format: str = "auto",  # noqa: A002 (the command line's --format)
    id: str | None = None,  # noqa: A002 (the command line's --id)
    cwd: PathLike | None = None,
    env: Mapping[str, str] | None = None,
    binary: PathLike | None = None,
) -> list[str]:
    """import_results records other tools' results (pytest-benchmark JSON, go test -bench,
    hyperfine, a run.json) in the history store and returns the run ids. A file that cannot be
    read or imported raises InferbenchError (exit 1), a bad option UsageError (exit 2)."""
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    args = ["import", *(os.fspath(f) for f in files), "--format", format]
    args += _opt("--store", store) + _opt("--id", id)
    p = execute(args, binary=binary, cwd=cwd, env=env)
    if p.returncode != 0:
        raise error_for(p.returncode, args, p.stderr)
    return p.stdout.split()


__all__ = ["InferbenchError", "RegressionError", "compare", "import_results", "run"]
