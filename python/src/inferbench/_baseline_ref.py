"""pytest --inferbench-baseline-ref REF: each benchmarked test measured at REF and in the working
tree in one job, through `inferbench run --baseline-ref REF`.

The session runs its other tests as usual and leaves the benchmarked ones (those that use a
benchmark fixture, inferbench's or pytest-benchmark's, after -k and -m) to inferbench: the plugin
writes a definition of one benchmark per test (the worker's pytest adapter, under this session's
interpreter) into the rootdir, and `inferbench run --baseline-ref REF` runs each test in two worker
processes, one in a worktree at REF and one in the working tree, their calls interleaved in ABBA
blocks until the sequential verdict says slower, same or unknown (docs/ci.md). The definition is
not at REF, so the run carries it there (docs/pytest.md): each side runs the test as its own tree
has it. The run's table and verdict are the session's summary; a regression is exit 3, an unknown
answer fails only with --inferbench-strict.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from inferbench import _binary, pytest_compat
from inferbench.errors import EXIT_REGRESSION, error_for, message_of

DEFINITION = ".inferbench-baseline-ref.yaml"

# The session's options that contradict a run against the ref, and why: each is refused when
# given, never ignored. The paired run measures the tests in its own workers and design, and its
# table and run folder are the session's output.
REFUSED = {
    "compare": "the session is compared with the ref, measured in this job",
    "save": "the run against the ref is written under --inferbench-output-dir already",
    "json": "the tests are timed by inferbench run's workers, not by this session",
    **dict.fromkeys(["min_rounds", "max_time", "min_time", "warmup_time", "warmup", "iterations", "max_samples", "timer",
                     "disable_gc"], "the paired run times the tests in ABBA blocks of its own design (docs/ci.md); "
                                    "--inferbench-rounds N asks for N calls a side"),
    **dict.fromkeys(["disable", "skip"], "the run against the ref measures the benchmarked tests"),
    **dict.fromkeys(["group_by", "sort", "histogram", "cprofile", "cprofile_top"], "the session's table is the run's"),
}

# pytest-benchmark's flags of the same kinds (pytest_compat.FLAGS, registered when pytest-benchmark
# is not active); its ignored ones warn as always, and --benchmark-compare-fail is honoured.
REFUSED_COMPAT = ["precision", "confidence", "warmup", "warmup_iterations", "save_data", "cprofile_dump", "quiet",
                  "columns", "time_unit"]


def check(config: pytest.Config, defaults: dict[str, Any], compat_registered: bool) -> None:
    """check refuses, naming it, each option given with --inferbench-baseline-ref that the run
    against the ref does not take (defaults: the inferbench options' defaults by dest;
    compat_registered: pytest-benchmark's flags are the plugin's, pytest-benchmark not active)."""
    for name, why in REFUSED.items():
        if config.getoption("inferbench_" + name) != defaults["inferbench_" + name]:
            raise pytest.UsageError(f"--inferbench-baseline-ref with --inferbench-{name.replace('_', '-')} (or its pytest-benchmark name): {why}; drop one of them")
    compat = {flag.removeprefix("--").replace("-", "_"): kw.get("default") for flag, kw in pytest_compat.FLAGS}
    for name in REFUSED_COMPAT if compat_registered else []:
        if (dest := "benchmark_" + name) in compat and config.getoption(dest, compat[dest]) != compat[dest]:
            raise pytest.UsageError(f"--inferbench-baseline-ref with --benchmark-{name.replace('_', '-')}: the paired run times the tests "
                                    "and writes the table itself; drop one of them")
    if config.pluginmanager.hasplugin("xdist") and (config.getoption("numprocesses", None) or config.getoption("dist", "no") not in ("no", None)):
        raise pytest.UsageError("--inferbench-baseline-ref with pytest-xdist (-n): xdist's workers would each take the benchmarked tests from the session, "
                                "and inferbench's run measures them one at a time anyway; run with -n 0 (or -p no:xdist)")


def benchmarked(item: pytest.Item) -> bool:
    """benchmarked: the item uses a benchmark fixture, inferbench's or pytest-benchmark's (the
    worker gives it inferbench's pytest adapter's either way)."""
    names = getattr(item, "fixturenames", ())
    return "inferbench_benchmark" in names or "benchmark" in names


def benchmark_name(nodeid: str, taken: set[str]) -> str:
    """benchmark_name turns a node id into a benchmark name (no '/', spaces or control
    characters): tests/test_a.py::test_b[8] is tests.test_a.test_b[8]."""
    path, _, rest = nodeid.partition("::")
    name = path.removesuffix(".py").replace("/", ".").replace("\\", ".") + "." + rest.replace("::", ".")
    name = re.sub(r"[\s\x00-\x1f\x7f]", "_", name)
    base, n = name, 1
    while name in taken:
        n += 1
        name = f"{base}~{n}"
    taken.add(name)
    return name


def definition(nodeids: list[str], python: str) -> str:
    """definition is the YAML of one benchmark per test, each a worker running the test through
    the pytest adapter (strings written as JSON, which YAML reads)."""
    taken: set[str] = set()
    docs = []
    for nid in nodeids:
        docs.append(f"name: {json.dumps(benchmark_name(nid, taken))}\n"
                    f"subject: {{kind: worker, adapter: pytest, python: {json.dumps(python)}}}\n"
                    f"params: {{test: {json.dumps(nid)}}}\n")
    return "---\n".join(docs)


class BaselineRef:
    """BaselineRef is the session's plugin under --inferbench-baseline-ref."""

    def __init__(self, config: pytest.Config, ref: str) -> None:
        self.config, self.ref = config, ref
        self.tests: list[str] = []
        self.lines: list[str] = []

    @pytest.hookimpl(trylast=True)  # after -k and -m have deselected theirs
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        ours = [i for i in items if benchmarked(i)]
        if ours:
            items[:] = [i for i in items if not benchmarked(i)]
            config.hook.pytest_deselected(items=ours)
        self.tests = [i.nodeid for i in ours]

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.config, "workerinput"):
            return
        if not self.tests:
            self.lines.append(f"inferbench: no test uses the benchmark fixture: nothing measured against {self.ref}; the session fails")
            session.exitstatus = session.exitstatus or pytest.ExitCode.TESTS_FAILED
            return
        code = self._run()
        none_here = session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED  # every selected test was benchmarked
        if code == EXIT_REGRESSION or (code != 0 and (session.exitstatus == 0 or none_here)):
            session.exitstatus = code
        elif none_here:
            session.exitstatus = pytest.ExitCode.OK  # the run measured them: not "no tests ran" (5)

    def args(self, path: Path) -> list[str]:
        """args is the inferbench run command line of the session's benchmarked tests."""
        c = self.config
        args = ["run", "--baseline-ref", self.ref, str(path), "--output-dir", c.getoption("inferbench_output_dir")]
        store = c.getoption("inferbench_store")
        args += ["--store", store] if store else ["--no-store"]
        for t in c.getoption("inferbench_threshold"):
            args += ["--threshold", t]
        for g in c.getoption("inferbench_gate"):
            args += ["--gate", g]
        for name in c.getoption("inferbench_secret_param"):
            args += ["--secret-param", name]
        if c.getoption("inferbench_strict"):
            args.append("--strict")
        if c.getoption("inferbench_measure") == "instructions":
            args += ["--measure", "instructions"]  # both sides counted under callgrind: an exact verdict
        if rounds := c.getoption("inferbench_rounds"):
            # Calls a side: counted ones in instruction mode; timed, a fixed design instead of
            # the sequential one (docs/ci.md, --iterations).
            args += ["--iterations", str(rounds)]
        return args

    def _run(self) -> int:
        c = self.config
        path = Path(c.rootpath) / DEFINITION
        path.write_text(definition(self.tests, sys.executable))
        args = self.args(Path(os.path.relpath(path, c.invocation_params.dir)))
        try:
            p = _binary.execute(args, cwd=c.invocation_params.dir)
        except Exception as e:  # noqa: BLE001 -- no binary, a binary that cannot run: said, and the session fails
            self.lines.append(f"inferbench: {e}")
            return int(pytest.ExitCode.TESTS_FAILED)
        finally:
            path.unlink(missing_ok=True)
        if p.stdout.strip():
            self.lines.append(p.stdout.rstrip())
        n = len(self.tests)
        if p.returncode == 0:
            self.lines.append(f"inferbench: {n} benchmarked test(s) measured against {self.ref} in this job: no regression")
        elif p.returncode == EXIT_REGRESSION:
            self.lines.append(f"inferbench: {message_of(p.stderr)}: the session fails with inferbench run's exit code 3")
        else:
            self.lines.append(f"inferbench: {error_for(p.returncode, args, p.stderr)}")
        return p.returncode

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.lines:
            terminalreporter.write_sep("-", f"inferbench against {self.ref}")
            for line in self.lines:
                terminalreporter.write_line(line)
