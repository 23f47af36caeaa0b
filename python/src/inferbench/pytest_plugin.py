"""The pytest plugin (entry point pytest11 "inferbench"): time functions, save the session as an
inferbench run, gate it against a baseline.

    def test_resize(inferbench_benchmark):
        out = inferbench_benchmark(resize, image, 224)   # pytest-benchmark's call style
        assert out.shape == (224, 224)

    pytest --inferbench-save main                        # benchmark_results/<id>/run.json
    pytest --inferbench-compare benchmark_results/latest # exit 3 on a regression

The fixture calibrates like pytest-benchmark's ``benchmark``: iterations per round until a round
lasts at least --inferbench-min-time, then rounds for --inferbench-max-time (at least
--inferbench-min-rounds), each round's time divided by its iterations being one sample. The
session is written as pytest-benchmark JSON with the raw rounds, which the inferbench binary
imports (`inferbench import`, the same reader as for pytest-benchmark's own files) and turns into
run.json with its statistics; the plugin adds the process's CPU and peak memory in each
benchmark's measured window and the environment fingerprint (`inferbench sysinfo`). Comparison is
`inferbench compare`: the same statistics, table and exit code (3 on a regression).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import platform
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from inferbench import _binary
from inferbench.errors import EXIT_REGRESSION, error_for, message_of
from inferbench.results import Comparison, parse_comparison

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

DEFAULT_OUTPUT_DIR = "benchmark_results"
_timer = time.perf_counter


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("inferbench", "inferbench: benchmarks saved as inferbench runs")
    g.addoption("--inferbench-save", nargs="?", const="pytest", default=None, metavar="NAME",
                help="write the session's benchmarks as an inferbench run (run.json) under --inferbench-output-dir, its id ending in NAME (default pytest); stored in the history store when --inferbench-store is given")
    g.addoption("--inferbench-compare", default=None, metavar="BASELINE",
                help="compare the session's benchmarks with BASELINE (a run.json, run folder, run id, latest or baseline:NAME) through inferbench compare; exit 3 on a regression")
    g.addoption("--inferbench-output-dir", default=DEFAULT_OUTPUT_DIR, metavar="DIR",
                help="folder that receives the run folder (default benchmark_results, as inferbench run)")
    g.addoption("--inferbench-store", default=None, metavar="STORE",
                help="history store to record saved runs in and to find BASELINE in (a SQLite file, sqlite:PATH or postgres://...)")
    g.addoption("--inferbench-threshold", action="append", default=[], metavar="SPEC",
                help="regression threshold for --inferbench-compare, [BENCHMARK:]METRIC_OR_KIND=PERCENT (repeatable), as inferbench compare --threshold")
    g.addoption("--inferbench-json", default=None, metavar="PATH",
                help="also write the session as pytest-benchmark JSON (raw rounds included) to PATH")
    g.addoption("--inferbench-min-rounds", type=int, default=5, metavar="N", help="at least this many measured rounds (default 5)")
    g.addoption("--inferbench-max-time", type=float, default=1.0, metavar="S", help="measure each benchmark for about this many seconds (default 1.0)")
    g.addoption("--inferbench-min-time", type=float, default=5e-6, metavar="S", help="calibrate iterations so that a round lasts at least this long (default 5e-06)")
    g.addoption("--inferbench-warmup", type=int, default=1, metavar="N", help="warm-up rounds before measuring, not recorded (default 1)")
    g.addoption("--inferbench-iterations", type=int, default=None, metavar="N", help="iterations per round instead of calibrating")
    g.addoption("--inferbench-rounds", type=int, default=None, metavar="N", help="measured rounds instead of --inferbench-max-time")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "inferbench(group=None, min_rounds=None, max_time=None, min_time=None, warmup=None, iterations=None, rounds=None): options of the inferbench_benchmark fixture for this test")
    sess = Session(config)
    config.stash[_SESSION] = sess
    config.pluginmanager.register(sess, "inferbench-session")


@dataclass
class Options:
    """Options of one benchmark's timing, from the command line and the test's marker."""

    min_rounds: int = 5
    max_time: float = 1.0
    min_time: float = 5e-6
    warmup: int = 1
    iterations: int | None = None
    rounds: int | None = None
    group: str | None = None


@dataclass
class Record:
    """Record is one timed benchmark: its rounds (seconds per iteration) and its window's resources."""

    name: str
    fullname: str
    group: str | None
    params: dict[str, Any] | None
    options: Options
    data: list[float] = field(default_factory=list)
    iterations: int = 1
    warmup_rounds: int = 0
    started: float = 0.0  # wall-clock start of the measured rounds (time.time)
    duration_s: float = 0.0
    cpu_s: float = 0.0
    peak_rss_mb: float | None = None
    extra_info: dict[str, Any] = field(default_factory=dict)
    failed: str = ""  # the test's failure, when it failed


class _Window:
    """_Window measures the process's CPU time and peak resident memory over the measured rounds.

    The peak is the kernel's high-water mark (VmHWM) reset when the window opens
    (/proc/self/clear_refs, Linux), as inferbench's process sampler does; elsewhere it is the
    process's peak so far (getrusage), an upper bound.
    """

    def __enter__(self) -> _Window:
        self.reset = _reset_hwm()
        self.cpu0 = time.process_time()
        self.wall0 = _timer()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = _timer() - self.wall0
        self.cpu = time.process_time() - self.cpu0
        self.peak_mb = _peak_rss_mb(self.reset)


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_rss_mb(reset: bool) -> float | None:
    if reset:
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024  # kB
        except OSError:
            pass
    if resource is None:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


class BenchmarkFixture:
    """BenchmarkFixture times a function, in pytest-benchmark's ``benchmark`` call style.

    ``fixture(fn, *args, **kwargs)`` calibrates iterations per round and rounds, runs them and
    returns fn's result; ``fixture.pedantic(fn, args, kwargs, setup, teardown, rounds,
    warmup_rounds, iterations)`` runs exactly what it is told. One call per test.
    """

    def __init__(self, record: Record, store: Callable[[Record], None]) -> None:
        self._record = record
        self._store = store
        self._used = False
        self.extra_info = record.extra_info

    @property
    def name(self) -> str:
        return self._record.name

    @property
    def group(self) -> str | None:
        return self._record.group

    @group.setter
    def group(self, value: str | None) -> None:
        self._record.group = value

    @property
    def stats(self) -> dict[str, float] | None:
        """stats is the summary of the rounds so far (seconds), None before the call."""
        return _stats(self._record.data, self._record.iterations) if self._record.data else None

    def _begin(self) -> None:
        if self._used:
            raise RuntimeError(f"{self._record.fullname}: inferbench_benchmark can be called once per test (use parametrize for several)")
        self._used = True

    def __call__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        self._begin()
        o = self._record.options
        loops = o.iterations or 0

        def timed(n: int, timer: Callable[[], float] = _timer) -> float:
            r = range(n)
            t0 = timer()
            for _ in r:
                fn(*args, **kwargs)
            return timer() - t0

        with _untraced():
            duration, loops = _calibrate(timed, o.min_time) if not loops else (timed(loops), loops)
            for _ in range(o.warmup):
                timed(loops)
            rounds = o.rounds or max(o.min_rounds, math.ceil(o.max_time / max(duration, 1e-9)))
            data: list[float] = []
            with _Window() as w:
                started = time.time()
                for _ in range(rounds):
                    data.append(timed(loops) / loops)
        self._finish(data, loops, o.warmup, started, w)
        return fn(*args, **kwargs)

    def pedantic(
        self,
        target: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        setup: Callable[[], Any] | None = None,
        teardown: Callable[..., Any] | None = None,
        rounds: int = 1,
        warmup_rounds: int = 0,
        iterations: int = 1,
    ) -> Any:
        """pedantic runs target for exactly rounds rounds of iterations calls, after
        warmup_rounds; setup (called before each round, may return (args, kwargs)) and teardown
        (after each round, with the same arguments) are not timed, as in pytest-benchmark."""
        self._begin()
        if iterations < 1 or rounds < 1 or warmup_rounds < 0:
            raise ValueError(f"{self._record.fullname}: pedantic wants rounds >= 1, iterations >= 1, warmup_rounds >= 0")
        if setup is not None and iterations > 1:
            raise ValueError(f"{self._record.fullname}: pedantic with setup takes iterations=1 (setup runs once per round)")
        kwargs = kwargs or {}
        result: Any = None

        def one(timer: Callable[[], float] = _timer) -> float:
            nonlocal result
            a, k = args, kwargs
            if setup is not None:
                got = setup()
                if got is not None:
                    a, k = got
            if iterations == 1:  # no loop around a single call: its cost would be measured
                t0 = timer()
                result = target(*a, **k)
                t = timer() - t0
            else:
                r = range(iterations)
                t0 = timer()
                for _ in r:
                    result = target(*a, **k)
                t = timer() - t0
            if teardown is not None:
                teardown(*a, **k)
            return t

        with _untraced():
            for _ in range(warmup_rounds):
                one()
            data: list[float] = []
            with _Window() as w:
                started = time.time()
                for _ in range(rounds):
                    data.append(one() / iterations)
        self._finish(data, iterations, warmup_rounds, started, w)
        return result

    def _finish(self, data: list[float], iterations: int, warmup: int, started: float, w: _Window) -> None:
        r = self._record
        r.data, r.iterations, r.warmup_rounds, r.started = data, iterations, warmup, started
        r.duration_s, r.cpu_s, r.peak_rss_mb = w.wall, w.cpu, w.peak_mb
        self._store(r)


@contextlib.contextmanager
def _untraced() -> Iterator[None]:
    """_untraced turns off a tracer (coverage, a debugger) and a profiler while rounds are timed,
    as pytest-benchmark does."""
    tracer, profiler = sys.gettrace(), sys.getprofile()
    sys.settrace(None)
    sys.setprofile(None)
    try:
        yield
    finally:
        sys.settrace(tracer)
        sys.setprofile(profiler)


def _calibrate(timed: Callable[[int], float], min_time: float) -> tuple[float, int]:
    """_calibrate returns (round duration, iterations) with iterations the fewest whose round
    lasts min_time and at least ten times the timer's resolution (pytest-benchmark's method)."""
    min_time = max(min_time, _resolution() * 10)
    estimate = min_time * 5 / 10
    loops = 1
    while True:
        duration = timed(loops)
        if duration >= min_time:
            return duration, loops
        if duration >= estimate:
            loops = math.ceil(min_time * loops / duration)
            if loops == 1:
                return duration, loops
        else:
            loops *= 10


_RES: float | None = None


def _resolution() -> float:
    global _RES
    if _RES is None:
        best = math.inf
        for _ in range(10):
            t0 = _timer()
            t1 = _timer()
            while t1 == t0:
                t1 = _timer()
            best = min(best, t1 - t0)
        _RES = best
    return _RES


def _stats(data: list[float], iterations: int) -> dict[str, Any]:
    """_stats is pytest-benchmark's stats object of the rounds data (seconds)."""
    n = len(data)
    s = sorted(data)
    q1, median, q3 = (statistics.quantiles(s, n=4, method="inclusive") if n > 1 else [s[0]] * 3)
    iqr = q3 - q1
    mean = statistics.fmean(s)
    std = statistics.stdev(s) if n > 1 else 0.0
    lo, hi = q1 - 1.5 * iqr, q3 + 1.5 * iqr
    return {
        "min": s[0], "max": s[-1], "mean": mean, "stddev": std, "rounds": n, "median": median,
        "iqr": iqr, "q1": q1, "q3": q3,
        "iqr_outliers": sum(1 for x in s if x < lo or x > hi),
        "stddev_outliers": sum(1 for x in s if abs(x - mean) > std),
        "outliers": f"{sum(1 for x in s if abs(x - mean) > std)};{sum(1 for x in s if x < lo or x > hi)}",
        "ld15iqr": next((x for x in s if x >= lo), s[0]), "hd15iqr": next((x for x in reversed(s) if x <= hi), s[-1]),
        "ops": 1 / mean if mean > 0 else 0.0, "total": sum(s) * iterations, "iterations": iterations,
        "data": list(data),
    }


_SESSION = pytest.StashKey["Session"]()


class Session:
    """Session collects the benchmarks of a pytest session and writes, stores and compares them."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.records: dict[str, Record] = {}
        self.started = _dt.datetime.now(_dt.timezone.utc)
        self.lines: list[str] = []  # what the terminal summary prints
        self.run_dir: Path | None = None
        self.table = ""
        self.comparison: Comparison | None = None

    def options_for(self, item: pytest.Item) -> Options:
        c = self.config
        o = Options(min_rounds=c.getoption("inferbench_min_rounds"), max_time=c.getoption("inferbench_max_time"),
                    min_time=c.getoption("inferbench_min_time"), warmup=c.getoption("inferbench_warmup"),
                    iterations=c.getoption("inferbench_iterations"), rounds=c.getoption("inferbench_rounds"))
        m = item.get_closest_marker("inferbench")
        if m is not None:
            for k, v in m.kwargs.items():
                if not hasattr(o, k):
                    raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.inferbench({k}=...): unknown option (want {', '.join(o.__dataclass_fields__)})")
                setattr(o, k, v)
        return o

    # Hooks of the session (the Session is registered as a plugin).

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        r = self.records.get(report.nodeid)
        if r is not None and report.when == "call" and report.failed:
            crash = getattr(report.longrepr, "reprcrash", None)
            r.failed = (getattr(crash, "message", "") or "test failed").splitlines()[0][:500]

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.finish(session)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.records and not self.lines:
            return
        tr = terminalreporter
        tr.write_sep("-", "inferbench")
        if self.table:
            tr.write_line(self.table.rstrip())
        elif self.records:
            tr.write_line(_table(self.records.values()))
        for line in self.lines:
            tr.write_line(line)

    # The pytest-benchmark JSON of the session (the binary's import reads it).

    def benchmark_json(self) -> dict[str, Any]:
        benches = []
        for r in self.records.values():
            if not r.data:
                continue
            benches.append({
                "group": r.group, "name": r.name, "fullname": r.fullname, "params": r.params,
                "param": None if not r.params else r.name.partition("[")[2].rstrip("]"),
                "extra_info": r.extra_info,
                "options": {"min_rounds": r.options.min_rounds, "max_time": r.options.max_time, "min_time": r.options.min_time,
                            "timer": "perf_counter", "warmup": r.warmup_rounds},
                "stats": _stats(r.data, r.iterations),
            })
        return {
            "machine_info": {"node": platform.node(), "processor": platform.processor(), "machine": platform.machine(),
                             "python_implementation": platform.python_implementation(), "python_version": platform.python_version(),
                             "system": platform.system(), "release": platform.release()},
            "commit_info": {},
            "benchmarks": benches,
            "datetime": self.started.isoformat(),
            "version": "inferbench-pytest",
        }

    # Writing the run.

    def finish(self, session: pytest.Session) -> None:
        c = self.config
        if hasattr(c, "workerinput"):
            return  # a pytest-xdist worker: its benchmarks are not gathered (docs/python.md, Limits)
        save, baseline = c.getoption("inferbench_save"), c.getoption("inferbench_compare")
        doc = self.benchmark_json()
        if p := c.getoption("inferbench_json"):
            Path(p).write_text(json.dumps(doc, indent=2))
        if not save and not baseline:
            return
        if not doc["benchmarks"]:
            hint = " (pytest-xdist runs them in workers, whose results are not gathered: run with -n 0)" if c.pluginmanager.hasplugin("xdist") and c.getoption("numprocesses", None) else ""
            self.lines.append(f"inferbench: no benchmark ran in this session: nothing saved or compared{hint}")
            if baseline:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return
        try:
            with tempfile.TemporaryDirectory(prefix="inferbench-pytest-") as tmp:
                run_json = self._write_run(doc, save or "pytest", Path(tmp), keep=bool(save))
                try:
                    if baseline:
                        self._compare(session, baseline, run_json)
                finally:
                    if save:
                        # After the comparison: there "latest" is still the run before this one.
                        self._publish(run_json)
        except Exception as e:  # the binary's errors and missing binary end the session as an error
            self.lines.append(f"inferbench: {e}")
            session.exitstatus = pytest.ExitCode.TESTS_FAILED if session.exitstatus == 0 else session.exitstatus

    def _run(self, args: list[str]) -> str:
        p = _binary.execute(args, cwd=self.config.invocation_params.dir)
        if p.returncode != 0:
            raise error_for(p.returncode, args, p.stderr)
        return p.stdout

    def _write_run(self, doc: dict[str, Any], name: str, tmp: Path, keep: bool) -> Path:
        """_write_run turns the session into run.json, in a run folder of the output folder when
        keep, else in tmp, and returns its path."""
        rid = f"{self.started.strftime('%Y%m%d_%H%M%S')}-{secrets.token_hex(4)}_{_safe(name)}"
        pb = tmp / "pytest-benchmark.json"
        pb.write_text(json.dumps(doc))
        db = f"sqlite:{tmp / 'import.db'}"
        self._run(["import", str(pb), "--format", "pytest", "--store", db, "--id", rid])
        self._run(["report", rid, "--store", db, "--format", "json", "-o", str(tmp / "imported.json")])
        run = json.loads((tmp / "imported.json").read_text())
        self._enrich(run)
        base = Path(self.config.invocation_params.dir) / self.config.getoption("inferbench_output_dir")
        folder = base / rid if keep else tmp / "run"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "run.json"
        path.write_text(json.dumps(run, indent=2, allow_nan=False))
        if keep:
            shutil.copy(pb, folder / "pytest-benchmark.json")
            self.run_dir = folder
            self.lines.append(f"inferbench: run {rid} written to {path}")
        self.table = self._run(["report", str(path), "--format", "table"])
        return path

    def _publish(self, path: Path) -> None:
        """_publish points the output folder's latest at the saved run and records it in the
        store when one is given."""
        rid = path.parent.name
        _link_latest(path.parent.parent, rid)
        if store := self.config.getoption("inferbench_store"):
            self._run(["import", str(path), "--format", "inferbench", "--store", store, "--id", rid])
            self.lines.append(f"inferbench: run {rid} recorded in {store}")

    def _enrich(self, run: dict[str, Any]) -> None:
        """_enrich adds what the pytest-benchmark JSON cannot carry: each window's resources,
        warm-up rounds, test failures, the environment and the command line."""
        by_name = {r.fullname: r for r in self.records.values()}
        for s in run["scenarios"]:
            r = by_name.get(s.get("source", ""))
            if r is None:
                continue
            s["iterations"]["warmup"] = r.warmup_rounds
            s["duration_s"] = r.duration_s
            s["started_at"] = _dt.datetime.fromtimestamp(r.started, _dt.timezone.utc).isoformat().replace("+00:00", "Z")
            s["subject"] = "pytest"
            m = s["metrics"]
            if r.duration_s > 0:
                m["cpu_pct"] = {"unit": "%", "better": "lower", "value": 100 * r.cpu_s / r.duration_s}
            m["cpu_s"] = {"unit": "s", "better": "lower", "value": r.cpu_s}
            if r.peak_rss_mb is not None:
                m["peak_rss_mb"] = {"unit": "MB", "better": "lower", "value": r.peak_rss_mb}
            if r.iterations > 1:
                s.setdefault("warnings", []).append(f"each sample is the mean of {r.iterations} calls (a calibrated round), not one call")
            if r.failed:
                s["status"], s["error"] = "failed", r.failed
        ok = sum(1 for s in run["scenarios"] if s["status"] == "ok")
        failed = sum(1 for s in run["scenarios"] if s["status"] == "failed")
        total = len(run["scenarios"])
        run["summary"].update(total=total, succeeded=ok, failed=failed, success_rate=ok / max(1, ok + failed))
        try:
            env = json.loads(self._run(["sysinfo", "--json"]))
        except Exception:  # the fingerprint is context: a run without it is still a run
            env = {}
        env["pytest"] = {k.removeprefix("pytest_"): v for k, v in run.get("environment", {}).items()}
        run["environment"] = env
        run["config"] = {"args": ["pytest", *self.config.invocation_params.args], "dir": str(self.config.rootpath)}
        run["started_at"] = self.started.isoformat().replace("+00:00", "Z")
        run["finished_at"] = _dt.datetime.now(_dt.timezone.utc).isoformat().replace("+00:00", "Z")

    def _compare(self, session: pytest.Session, baseline: str, run_json: Path) -> None:
        c = self.config
        args = ["compare", baseline, str(run_json), "--results-dir", c.getoption("inferbench_output_dir")]
        if store := c.getoption("inferbench_store"):
            args += ["--store", store]
        for t in c.getoption("inferbench_threshold"):
            args += ["--threshold", t]
        with tempfile.TemporaryDirectory(prefix="inferbench-compare-") as tmp:
            out = Path(tmp) / "compare.json"
            p = _binary.execute([*args, "--format", "json", "-o", str(out)], cwd=c.invocation_params.dir)
            if p.returncode not in (0, EXIT_REGRESSION) or not out.is_file():
                raise error_for(p.returncode or 1, args, p.stderr)
            text = _binary.execute([*args, "--format", "text"], cwd=c.invocation_params.dir).stdout
            verdict = parse_comparison(out.read_text(), p.returncode, text)
        self.comparison = verdict
        self.lines.append(text.rstrip())
        if verdict.failed:
            self.lines.append(f"inferbench: {message_of(p.stderr)} against {baseline}: the session fails with inferbench compare's exit code {p.returncode}")
            session.exitstatus = p.returncode
        else:
            self.lines.append(f"inferbench: no regression against {baseline}")


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name) or "pytest"


def _link_latest(base: Path, rid: str) -> None:
    """_link_latest points base/latest at the run folder, as inferbench run does (not on Windows)."""
    if sys.platform == "win32":
        return
    link = base / "latest"
    tmp = base / f".latest-{rid}"
    try:
        os.symlink(rid, tmp)
        os.replace(tmp, link)
    except OSError:
        tmp.unlink(missing_ok=True)


@pytest.fixture
def inferbench_benchmark(request: pytest.FixtureRequest) -> Iterator[BenchmarkFixture]:
    """inferbench_benchmark times a function over calibrated rounds: pytest-benchmark's
    ``benchmark`` fixture, whose results --inferbench-save writes as an inferbench run."""
    sess: Session = request.config.stash[_SESSION]
    node = request.node
    callspec = getattr(node, "callspec", None)
    o = sess.options_for(node)
    rec = Record(name=node.name, fullname=node.nodeid, group=o.group,
                 params=dict(callspec.params) if callspec else None, options=o)
    yield BenchmarkFixture(rec, lambda r: sess.records.__setitem__(r.fullname, r))


def _table(records: Any) -> str:
    rows = [("BENCHMARK", "ROUNDS", "ITER", "MEDIAN", "IQR", "MIN", "MEAN")]
    for r in records:
        if not r.data:
            continue
        s = _stats(r.data, r.iterations)
        rows.append((r.name, str(s["rounds"]), str(r.iterations), _dur(s["median"]), _dur(s["iqr"]), _dur(s["min"]), _dur(s["mean"])))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows)


def _dur(s: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.4g} {unit}"
    return f"{s / 1e-9:.4g} ns"
