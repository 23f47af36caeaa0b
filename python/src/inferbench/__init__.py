"""inferbench for Python: the inferbench binary driven from Python, with typed results.

    import inferbench

    run = inferbench.run(["benches"], category="performance", iterations=50, warmup=10)
    for s in run.scenarios:
        print(s.id, s.metrics["latency_ms"].summary.median, s.metrics["latency_ms"].unit)
    verdict = inferbench.compare("baseline:main", run)
    if verdict.failed:
        print(verdict.regressions, "regressions")

The pytest plugin (the inferbench_benchmark fixture, --inferbench-save, --inferbench-compare) is
inferbench.pytest_plugin; docs/python.md describes both.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from inferbench._binary import find_binary
from inferbench.api import compare, import_results, run
from inferbench.errors import BinaryNotFound, CommandTimeout, InferbenchError, RegressionError, ResultError, UsageError
from inferbench.results import (
    BudgetCheck,
    Comparison,
    Config,
    Interval,
    IterationError,
    Iterations,
    Metric,
    Row,
    Run,
    RunRef,
    RunSummary,
    Scenario,
    Summary,
    load,
)

try:
    __version__ = version("pyinferbench")
except PackageNotFoundError:  # imported from the source tree
    __version__ = "0.0.dev0"

__all__ = [
    "BinaryNotFound",
    "BudgetCheck",
    "CommandTimeout",
    "Comparison",
    "Config",
    "InferbenchError",
    "Interval",
    "IterationError",
    "Iterations",
    "Metric",
    "RegressionError",
    "ResultError",
    "Row",
    "Run",
    "RunRef",
    "RunSummary",
    "Scenario",
    "Summary",
    "UsageError",
    "compare",
    "find_binary",
    "import_results",
    "load",
    "run",
]
