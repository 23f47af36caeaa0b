"""The pytest plugin (entry point pytest11 "inferbench"): time functions, save the session as an
inferbench run, gate it against a baseline.

    def test_resize(inferbench_benchmark):               # or `benchmark` without pytest-benchmark
        out = inferbench_benchmark(resize, image, 224)   # pytest-benchmark's call style
        assert out.shape == (224, 224)

    pytest --inferbench-save main                        # benchmark_results/<id>/run.json
    pytest --inferbench-compare benchmark_results/latest # exit 3 on a regression

Each benchmark is warmed up, then calibrated (iterations per round so that a round lasts
--inferbench-min-time and at least 100 grains of its timer), then timed over rounds for
--inferbench-max-time; a round's time divided by its iterations is one per-call time (_timing.py).
The session is written as pytest-benchmark JSON holding each test's statistics and its samples
(at most --inferbench-max-samples: block medians of the rounds for the median gate), which the
binary imports (`inferbench import`) and turns into run.json; the plugin adds each benchmark's CPU
and peak memory, the gate, and the environment (`inferbench sysinfo`). Comparison is one
`inferbench compare --between-sessions` call: its table and its exit code (3 on a regression;
a change two sessions cannot tell from the machine's state is unknown, failing only with
--inferbench-strict). The gate is the median per-call time (latency_ms) with a 5% threshold
unless the user names others.

The fixture is _fixture.py, the options _options.py, pytest-benchmark's flags and marker
pytest_compat.py, the files a session writes besides its run _files.py, and what the session
says of an unknown comparison _verdict.py.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from inferbench import _baseline_ref, _binary, _counted, _timing, pytest_compat
from inferbench._fixture import BenchmarkFixture, Options, Record
from inferbench._files import TEMP_PREFIX, link_latest, remove_stale_temp, safe_name, saveable
from inferbench._options import (
    COUNT_THRESHOLD,
    DEFAULT_GATE,
    DEFAULT_THRESHOLD,
    MEDIAN_SAMPLES,
    OPTIONS,
    SAME_MEANING,
    TAIL_SAMPLES,
    THRESHOLDS_FILE,
    benchmark_plugin_loaded,
    check_options,
)
from inferbench._table import histogram_svg, table
from inferbench._verdict import unknown_summary
from inferbench.errors import EXIT_REGRESSION, InferbenchError, error_for, message_of
from inferbench.pytest_compat import InferbenchWarning
from inferbench.results import Comparison, parse_comparison

def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    g = parser.getgroup("inferbench", "inferbench: benchmarks saved as inferbench runs")
    aliases = not benchmark_plugin_loaded(pluginmanager)
    for name, alias, kw in OPTIONS:
        names = [name, alias] if alias and aliases else [name]
        g.addoption(*names, dest=name.removeprefix("--").replace("-", "_"), **kw)
    if aliases:  # pytest-benchmark's other flags (its own when it is active)
        pytest_compat.register(g)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "inferbench(group=None, min_rounds=None, max_time=None, min_time=None, warmup=None, warmup_time=None, iterations=None, rounds=None, timer=None, disable_gc=None, max_samples=None): options of the benchmark fixture for this test")
    for w in pytest_compat.apply(config, registered=not benchmark_plugin_loaded(config.pluginmanager)):
        config.issue_config_time_warning(InferbenchWarning(w), stacklevel=2)
    check_options(config)
    if config.getoption("inferbench_measure") == _counted.MODE and not os.environ.get(_counted.ENV) and not hasattr(config, "workerinput") and not config.getoption("inferbench_baseline_ref"):
        _run_under_callgrind(config)
    pb = benchmark_plugin_loaded(config.pluginmanager)
    if not pb:
        config.addinivalue_line("markers", "benchmark(group=None, min_rounds=None, max_time=None, min_time=None, timer=None, disable_gc=None, warmup=None, warmup_iterations=None, precision=None, confidence=None, cprofile=None): pytest-benchmark's marker, read by inferbench where the meaning is the same")
        config.pluginmanager.register(_Alias(), "inferbench-benchmark-alias")
    sess = Session(config, pytest_benchmark=pb)
    config.stash[_SESSION] = sess
    if ref := config.getoption("inferbench_baseline_ref"):  # _baseline_ref.py
        config.pluginmanager.register(_baseline_ref.BaselineRef(config, ref), "inferbench-baseline-ref")
    config.pluginmanager.register(sess, "inferbench-session")
    if sess.xdist and not hasattr(config, "workerinput"):
        config.issue_config_time_warning(InferbenchWarning(
            "inferbench: benchmarks disabled under pytest-xdist (-n): parallel workers share the CPUs and their "
            "timings would not be gathered; each benchmarked function runs once, untimed. Run benchmarks with -n 0 "
            "(or -p no:xdist)."), stacklevel=2)


def _run_under_callgrind(config: pytest.Config) -> None:
    """_run_under_callgrind runs this pytest session again under callgrind (instruction mode),
    removes callgrind's files after it and exits with its exit code: it does not return."""
    if sys.platform == "win32":
        raise pytest.UsageError("--inferbench-measure instructions: valgrind does not run on Windows; measure time (drop the option)")
    try:
        valgrind, version = _counted.find_valgrind()
    except _counted.Unavailable as e:
        raise pytest.UsageError(str(e)) from None
    out = Path(tempfile.mkdtemp(prefix="inferbench-callgrind-"))
    capman = config.pluginmanager.getplugin("capturemanager")
    if capman is not None:
        capman.suspend_global_capture(in_=True)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        # A child rather than exec: callgrind writes its last file when the session exits, and
        # the folder is removed only after that.
        rc = subprocess.run(_counted.argv(valgrind, out), env=_counted.environ(out, version), check=False).returncode
    except KeyboardInterrupt:
        rc = 130
    finally:
        shutil.rmtree(out, ignore_errors=True)
    os._exit(rc if rc >= 0 else 128 - rc)


_SESSION = pytest.StashKey["Session"]()
_FIXTURES = ("inferbench_benchmark", "benchmark")


class Session:
    """Session collects the benchmarks of a pytest session and writes, stores and compares them."""

    def __init__(self, config: pytest.Config, pytest_benchmark: bool = False) -> None:
        self.config = config
        self.pytest_benchmark = pytest_benchmark
        self.records: dict[str, Record] = {}
        self.started = _dt.datetime.now(_dt.timezone.utc)
        self.lines: list[str] = []  # what the terminal summary prints
        self.run_dir: Path | None = None
        self.comparison: Comparison | None = None
        self.notes: set[str] = set()
        counted = os.environ.get(_counted.ENV)
        self.counter = _counted.Counter(Path(counted)) if counted and config.getoption("inferbench_measure") == _counted.MODE else None
        self.identity: dict[str, str] = {}
        self.xdist = hasattr(config, "workerinput") or bool(
            config.pluginmanager.hasplugin("xdist")
            and (config.getoption("numprocesses", None) or config.getoption("dist", "no") not in ("no", None)))

    def opt(self, name: str) -> Any:
        """opt is the value of option inferbench_NAME, or of pytest-benchmark's benchmark_NAME of
        the same meaning when pytest-benchmark is active and it was given."""
        v = self.config.getoption("inferbench_" + name)
        if not v and name in SAME_MEANING and self.pytest_benchmark:
            v = self.config.getoption("benchmark_" + name, None) or v
        return v

    @property
    def disabled(self) -> bool:
        return bool(self.opt("disable") or self.xdist)

    @property
    def tails(self) -> bool:
        return any(".p" in g for g in self.config.getoption("inferbench_gate"))

    def options_for(self, item: pytest.Item) -> Options:
        o = Options(min_rounds=self.opt("min_rounds"), max_time=self.opt("max_time"), min_time=self.opt("min_time"),
                    warmup=self.opt("warmup"), warmup_time=self.opt("warmup_time"), iterations=self.opt("iterations"),
                    rounds=self.opt("rounds"), timer=self.opt("timer"), disable_gc=bool(self.opt("disable_gc")),
                    max_samples=self.opt("max_samples"))
        if not self.pytest_benchmark:  # its flags, registered here (pytest_compat)
            rounds, o.warmup_iterations = pytest_compat.warmup_iterations(self.config)
            o.warmup = o.warmup if rounds is None else rounds
            o.precision, o.confidence = self.config.getoption("benchmark_precision", None), self.config.getoption("benchmark_confidence", 0.99)
            o.cprofile_dump = self.config.getoption("benchmark_cprofile_dump", None)
        known = [f.name for f in fields(Options)]
        # pytest-benchmark's marker first, then inferbench's, which wins where both say something.
        m = item.get_closest_marker("benchmark")
        if m is not None and not self.pytest_benchmark:
            pytest_compat.marker_options(m.kwargs, o, self.note)
        m = item.get_closest_marker("inferbench")
        if m is not None:
            for k, v in m.kwargs.items():
                if k not in known:
                    raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.inferbench({k}=...): unknown option (want {', '.join(known)})")
                setattr(o, k, v)
        return o

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.add(text)
            self.lines.append(f"inferbench: {text}")

    # Hooks of the session (the Session is registered as a plugin).

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        skip, only = self.opt("skip"), self.opt("only")
        theirs = 0
        for item in items:
            names = getattr(item, "fixturenames", ())
            ours = "inferbench_benchmark" in names or ("benchmark" in names and not self.pytest_benchmark)
            if "benchmark" in names and self.pytest_benchmark:
                theirs += 1
            if only and not ours:
                item.add_marker(pytest.mark.skip(reason="not a benchmark (--inferbench-only)"))
            elif skip and not only and ours:
                item.add_marker(pytest.mark.skip(reason="a benchmark (--inferbench-skip)"))
        if theirs and (config.getoption("inferbench_save") or config.getoption("inferbench_compare")):
            warnings.warn(InferbenchWarning(
                f"inferbench: {theirs} test(s) use the `benchmark` fixture, which is pytest-benchmark's here (it is installed): "
                "their results are not in inferbench's run. Use inferbench_benchmark, or run with -p no:benchmark to make "
                "`benchmark` inferbench's."), stacklevel=1)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        r = self.records.get(report.nodeid)
        if r is not None and report.when == "call" and report.failed:
            crash = getattr(report.longrepr, "reprcrash", None)
            r.failed = (getattr(crash, "message", "") or "test failed").splitlines()[0][:500]

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.finish(session)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        recs = [r for r in self.records.values() if r.data]
        if not recs and not self.lines:
            return
        tr = terminalreporter
        tr.write_sep("-", "inferbench")
        c = self.config
        if recs and not c.getoption("benchmark_quiet", False):
            tr.write_line(table(recs, c.getoption("inferbench_group_by"), c.getoption("inferbench_sort"),
                                columns=c.getoption("benchmark_columns", None), unit=c.getoption("benchmark_time_unit", None)).rstrip())
            if self.counter:
                tr.write_line("inferbench: measured instructions per call under valgrind's callgrind (--inferbench-measure instructions), "
                              "not time: the gate is their median, 2% worse")
        for r in sorted((r for r in recs if r.profile), key=lambda r: -sorted(r.data)[len(r.data) // 2])[:3]:
            tr.write_line(f"\ncProfile of {r.fullname} (one calibrated round of {r.iterations} call(s)):")
            tr.write_line(r.profile)
        for line in self.lines:
            tr.write_line(line)

    # The pytest-benchmark JSON of the session (the binary's import reads it).

    def benchmark_json(self) -> dict[str, Any]:
        benches = []
        for r in self.records.values():
            if not r.data:
                continue
            data = r.data
            if r.measure == _counted.MODE:
                # The import reads seconds and writes milliseconds: counts go in as count / 1000 so
                # that the imported metric's numbers are counts (_enrich renames it instructions).
                data = [x / 1000 for x in r.data]
            st = _timing.stats(data, r.iterations)
            cap = r.options.max_samples
            if cap is None:
                cap = TAIL_SAMPLES if self.tails else MEDIAN_SAMPLES
            st["data"] = _timing.summarize(data, cap, self.tails)
            benches.append({
                "group": r.group, "name": self._hide(r.name, r.params), "fullname": self._hide(r.fullname, r.params), "params": self._params(r.params),
                "param": None if not r.params else self._hide(r.name.partition("[")[2].rstrip("]"), r.params),
                "extra_info": saveable(r.extra_info),
                "options": {"min_rounds": r.options.min_rounds, "max_time": r.options.max_time, "min_time": r.options.min_time,
                            "timer": r.timer, "disable_gc": r.options.disable_gc, "warmup": r.warmup_rounds},
                "stats": st,
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

    def _params(self, params: dict[str, Any] | None) -> Any:
        """_params is a test's parameters as the JSON holds them: saveable, and those of a name
        declared secret (--inferbench-secret-param) masked whole, as the import masks them."""
        out = saveable(params)
        for name in self.config.getoption("inferbench_secret_param"):
            if isinstance(out, dict) and name in out:
                out[name] = "xxxxx"
        return out

    def _hide(self, text: str, params: dict[str, Any] | None) -> str:
        """_hide masks in a test's name the text values (6 characters or more, as the binary's
        secrets) of its parameters declared secret: pytest names a test by them."""
        for name in self.config.getoption("inferbench_secret_param"):
            v = (params or {}).get(name)
            if isinstance(v, str) and len(v) >= 6:
                text = text.replace(v, "xxxxx")
        return text

    # Writing the run.

    def finish(self, session: pytest.Session) -> None:
        c = self.config
        if hasattr(c, "workerinput"):
            return  # a pytest-xdist worker: benchmarks are disabled there
        save, baseline = c.getoption("inferbench_save"), c.getoption("inferbench_compare")
        doc = self.benchmark_json()
        if p := c.getoption("inferbench_json"):
            try:
                Path(p).write_text(json.dumps(doc, indent=2))
            except OSError as e:  # the run is still saved: say so, and fail the session
                self.lines.append(f"inferbench: the pytest-benchmark JSON (--benchmark-json, --inferbench-json) not written to {p}: {e}")
                session.exitstatus = session.exitstatus or pytest.ExitCode.TESTS_FAILED
        if hist := c.getoption("inferbench_histogram"):
            try:
                for path in histogram_svg([r for r in self.records.values() if r.data], c.getoption("inferbench_group_by"), hist):
                    self.lines.append(f"inferbench: histogram written to {path}")
            except OSError as e:  # a plot is not worth the run: say so, save the rest
                self.lines.append(f"inferbench: --benchmark-histogram {hist}: {e}")
                session.exitstatus = session.exitstatus or pytest.ExitCode.TESTS_FAILED
        if not save and not baseline:
            return
        if not doc["benchmarks"]:
            raised = [r for r in self.records.values() if r.failed and not r.data]
            why = "benchmarks are disabled under pytest-xdist: run them with -n 0" if self.xdist else (
                "benchmarks are disabled (--inferbench-disable)" if self.disabled else
                f"every benchmark failed: {len(raised)} test(s) raised inside the benchmark fixture, first {raised[0].fullname}: {raised[0].failed}" if raised else
                "no test used the benchmark fixture")
            what = "saved" if save and not baseline else "saved or compared" if save else "compared"
            self.lines.append(f"inferbench: no benchmark ran in this session: nothing {what} ({why}); the session fails")
            if session.exitstatus == 0:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return
        t0 = time.perf_counter()
        remove_stale_temp()
        try:
            with tempfile.TemporaryDirectory(prefix=f"{TEMP_PREFIX}{os.getpid()}-") as tmp:
                run_json = self._write_run(doc, save or "pytest", Path(tmp), keep=bool(save))
                try:
                    if baseline:
                        self._compare(session, baseline, run_json)
                finally:
                    if save:
                        # After the comparison: there "latest" is still the run before this one.
                        self._publish(run_json)
        except Exception as e:  # noqa: BLE001 -- the binary's errors, or any other: the session fails, its measurements kept
            self.lines.append(f"inferbench: {e}" if isinstance(e, (InferbenchError, OSError, ValueError)) else f"inferbench: {type(e).__name__}: {e}")
            if kept := self._keep(doc):
                self.lines.append(f"inferbench: the session's measurements are kept in {kept} (pytest-benchmark JSON: inferbench import {kept})")
            session.exitstatus = pytest.ExitCode.TESTS_FAILED if session.exitstatus == 0 else session.exitstatus
            return
        what = "saved and compared" if save and baseline else "saved" if save else "compared"
        self.lines.append(f"inferbench: {len(doc['benchmarks'])} benchmark(s) {what} in {time.perf_counter() - t0:.2f} s")

    def _keep(self, doc: dict[str, Any]) -> Path | None:
        """_keep writes the session's pytest-benchmark JSON into the output folder when saving or
        comparing failed, so that nothing measured is lost; None when even that fails."""
        base = Path(self.config.invocation_params.dir) / self.config.getoption("inferbench_output_dir")
        path = base / f"unsaved-{self.started.strftime('%Y%m%d_%H%M%S')}-{os.getpid()}.json"
        try:
            base.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(doc, indent=1))
        except OSError:
            return None
        return path

    def _run(self, args: list[str]) -> str:
        p = _binary.execute(args, cwd=self.config.invocation_params.dir)
        if p.returncode != 0:
            raise error_for(p.returncode, args, p.stderr)
        return p.stdout

    def _write_run(self, doc: dict[str, Any], name: str, tmp: Path, keep: bool) -> Path:
        """_write_run turns the session into run.json, in a run folder of the output folder when
        keep, else in tmp, and returns its path."""
        rid = f"{self.started.strftime('%Y%m%d_%H%M%S')}-{secrets.token_hex(4)}_{safe_name(name)}"
        pb = tmp / "pytest-benchmark.json"
        pb.write_text(json.dumps(doc))
        db = f"sqlite:{tmp / 'import.db'}"
        secret = [a for name in self.config.getoption("inferbench_secret_param") for a in ("--secret-param", name)]
        self._run(["import", str(pb), "--format", "pytest", "--store", db, "--id", rid, *secret])
        self._run(["report", rid, "--store", db, "--format", "json", "-o", str(tmp / "imported.json")])
        run = json.loads((tmp / "imported.json").read_text())
        self._enrich(run)
        base = Path(self.config.invocation_params.dir) / self.config.getoption("inferbench_output_dir")
        folder = base / rid if keep else tmp / "run"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "run.json"
        path.write_text(json.dumps(run, indent=1, allow_nan=False))
        if keep:
            if not self.counter:  # counts are not pytest-benchmark's seconds
                (folder / "pytest-benchmark.json").write_text(json.dumps(doc, indent=1))
            self.run_dir = folder
            self.lines.append(f"inferbench: run {rid} written to {path}")
        return path

    def _publish(self, path: Path) -> None:
        """_publish points the output folder's latest at the saved run and records it in the
        store when one is given."""
        rid = path.parent.name
        link_latest(path.parent.parent, rid)
        if store := self.config.getoption("inferbench_store"):
            self._run(["import", str(path), "--format", "inferbench", "--store", store, "--id", rid])
            self.lines.append(f"inferbench: run {rid} recorded in {store}")

    def _enrich(self, run: dict[str, Any]) -> None:
        """_enrich adds what the pytest-benchmark JSON cannot carry: each window's resources,
        warm-up rounds, the gate, test failures, the environment and the command line."""
        by_name = {r.fullname: r for r in self.records.values()}
        if self.counter:
            self.identity = _counted.identity()
        gate = [DEFAULT_GATE, *(g for g in self.config.getoption("inferbench_gate") if g != DEFAULT_GATE)]
        for s in run["scenarios"]:
            r = by_name.get(s.get("source", ""))
            if r is None:
                continue
            s["iterations"]["warmup"] = r.warmup_rounds
            s["duration_s"] = r.duration_s
            s["started_at"] = _dt.datetime.fromtimestamp(r.started, _dt.timezone.utc).isoformat().replace("+00:00", "Z")
            s["subject"] = "pytest"
            s["gate"] = gate
            if recorded := self.recorded_thresholds():
                s["thresholds"] = recorded
            m = s["metrics"]
            if r.measure == _counted.MODE:
                ins = m.pop("latency_ms")
                ins.update(unit="count", better="lower")
                m["instructions"] = ins
                m.pop("iterations_per_s", None)
                m["est_cycles"] = {"unit": "cycles", "better": "lower", "value": sum(r.est_cycles) / len(r.est_cycles)}
                s["counted"] = self.identity
                s["gate"] = ["instructions", *(g for g in gate[1:] if g != "instructions")]
            if r.duration_s > 0:
                m["cpu_pct"] = {"unit": "%", "better": "lower", "value": 100 * r.cpu_s / r.duration_s}
            m["cpu_s"] = {"unit": "s", "better": "lower", "value": r.cpu_s}
            if r.peak_rss_mb is not None:
                m["peak_rss_mb"] = {"unit": "MB", "better": "lower", "value": r.peak_rss_mb}
            warns = s.setdefault("warnings", [])
            if r.iterations > 1:
                warns.append(f"each round is {r.iterations} calls: a round's time / {r.iterations} is one per-call time")
            kept = len((m.get("latency_ms") or m.get("instructions") or {}).get("samples") or [])
            if kept and kept < len(r.data):
                how = "evenly spaced rounds" if self.tails else f"the median of a block of {len(r.data) // kept}-{-(-len(r.data) // kept)} consecutive rounds"
                warns.append(f"{len(r.data)} rounds summarized into {kept} samples, each {how} (--inferbench-max-samples)")
            if r.failed:
                s["status"], s["error"] = "failed", r.failed
        run["scenarios"].extend(self._raised(gate))
        ok = sum(1 for s in run["scenarios"] if s["status"] == "ok")
        failed = sum(1 for s in run["scenarios"] if s["status"] == "failed")
        total = len(run["scenarios"])
        run["summary"].update(total=total, succeeded=ok, failed=failed, success_rate=ok / max(1, ok + failed))
        try:
            env = json.loads(self._run(["sysinfo", "--json"]))
        except (InferbenchError, ValueError):  # the fingerprint is context: a run without it is still a run
            env = {}
        env["pytest"] = {k.removeprefix("pytest_"): v for k, v in run.get("environment", {}).items()}
        run["environment"] = env
        run["config"] = {"args": ["pytest", *self.config.invocation_params.args], "dir": str(self.config.rootpath)}
        run["started_at"] = self.started.isoformat().replace("+00:00", "Z")
        run["finished_at"] = _dt.datetime.now(_dt.timezone.utc).isoformat().replace("+00:00", "Z")

    def _raised(self, gate: list[str]) -> list[dict[str, Any]]:
        """_raised is the failed scenarios of the tests that raised inside the benchmark fixture:
        they have no rounds, so the pytest-benchmark JSON (and the import) has no place for them.
        They are named as the import names the others (benchmark: the group, or the test's name
        without parameters; scenario: the test's name, or its parameters or default)."""
        out = []
        for r in self.records.values():
            if r.data or not r.failed:
                continue
            base, _, param = r.name.partition("[")
            bench, sc = (r.group, r.name) if r.group else (base, param.rstrip("]") or "default")
            s: dict[str, Any] = {"benchmark": bench, "scenario": sc, "subject": "pytest", "status": "failed", "error": r.failed,
                                 "source": r.fullname, "duration_s": 0, "iterations": {"warmup": 0, "measured": 0, "failed": 1},
                                 "started_at": self.started.isoformat().replace("+00:00", "Z"), "gate": gate}
            if r.params:
                s["params"] = r.params
            out.append(s)
        return out

    def thresholds(self) -> list[str]:
        """thresholds is the --threshold specs of the session's comparison: the user's, else the
        plugin's defaults (none when a thresholds file sets them)."""
        c = self.config
        given = c.getoption("inferbench_threshold")
        if not given and not (Path(c.invocation_params.dir) / THRESHOLDS_FILE).is_file():
            return [DEFAULT_THRESHOLD, COUNT_THRESHOLD] if self.counter else [DEFAULT_THRESHOLD]
        return list(given)

    def recorded_thresholds(self) -> dict[str, float]:
        """recorded_thresholds is what the saved run records as its scenarios' thresholds (run.json
        "thresholds"): the session's unscoped --threshold specs, so that any inferbench compare of
        the run judges as the plugin does."""
        out: dict[str, float] = {}
        for spec in self.thresholds():
            key, _, pct = spec.partition("=")
            if ":" in key:
                continue  # scoped to one benchmark: compare's --threshold carries it
            try:
                out[key.strip()] = float(pct.strip().rstrip("%"))
            except ValueError:
                continue
        return out

    def compare_args(self, baseline: str, run_json: Path) -> list[str]:
        """compare_args is the inferbench compare command line of the session against baseline."""
        c = self.config
        args = ["compare", baseline, str(run_json), "--results-dir", c.getoption("inferbench_output_dir")]
        if store := c.getoption("inferbench_store"):
            args += ["--store", store]
        for t in self.thresholds():
            args += ["--threshold", t]
        for g in c.getoption("inferbench_gate"):
            args += ["--gate", g]
        # Two sessions: the samples of one say nothing of the machine's state in the other.
        args.append("--between-sessions")
        if c.getoption("inferbench_strict"):
            args.append("--strict")
        return args

    def _compare(self, session: pytest.Session, baseline: str, run_json: Path) -> None:
        try:
            self._compare_once(session, baseline, run_json)
        except InferbenchError as e:
            if not getattr(self.config.option, "inferbench_report_only", False):
                raise
            # --benchmark-compare reports: with nothing to compare with, pytest-benchmark warns.
            self.lines.append(f"inferbench: not compared with {baseline}: {e} (--benchmark-compare reports and does not fail)")

    def _compare_once(self, session: pytest.Session, baseline: str, run_json: Path) -> None:
        c = self.config
        args = self.compare_args(baseline, run_json)
        with tempfile.TemporaryDirectory(prefix=f"{TEMP_PREFIX}{os.getpid()}-compare-") as tmp:
            out = Path(tmp) / "compare.json"
            # One comparison: the table on stdout and the JSON beside it.
            p = _binary.execute([*args, "--format", "text", "--json", str(out)], cwd=c.invocation_params.dir)
            if p.returncode == 2 and "unknown flag: --between-sessions" in p.stderr:
                # A binary older than compare --between-sessions (the pure-Python wheel runs the
                # one on PATH) judges the two sessions by their samples alone: say so.
                args = [a for a in args if a != "--between-sessions"]
                self.lines.append("inferbench: this inferbench binary predates compare --between-sessions: the two sessions are judged by their samples, and a change of the machine's state between them reads as a change of the code")
                p = _binary.execute([*args, "--format", "text", "--json", str(out)], cwd=c.invocation_params.dir)
            if p.returncode == 2 and "unknown flag: --json" in p.stderr:
                # A binary older than compare --json (the pure-Python wheel runs the one on PATH):
                # the JSON, then the text, compared twice.
                p = _binary.execute([*args, "--format", "json", "-o", str(out)], cwd=c.invocation_params.dir)
                text = _binary.execute([*args, "--format", "text"], cwd=c.invocation_params.dir).stdout
                p = type(p)(p.args, p.returncode, text, p.stderr)
            if p.returncode not in (0, EXIT_REGRESSION) or not out.is_file():
                raise error_for(p.returncode or 1, args, p.stderr)
            verdict = parse_comparison(out.read_text(), p.returncode, p.stdout)
        self.comparison = verdict
        self.lines.append(p.stdout.rstrip())
        if verdict.failed and getattr(c.option, "inferbench_report_only", False):
            self.lines.append(f"inferbench: {message_of(p.stderr)} against {baseline}: reported, not failing (--benchmark-compare without --benchmark-compare-fail)")
        elif verdict.failed:
            self.lines.append(f"inferbench: {message_of(p.stderr)} against {baseline}: the session fails with inferbench compare's exit code {p.returncode}")
            session.exitstatus = p.returncode
        elif verdict.unknown:
            # Not a failure, and not a pass either: say so, and what can tell (the table's
            # UNKNOWN headline names the changes).
            self.lines.append(f"inferbench: unknown against {baseline}, not failing (--inferbench-strict fails it): {unknown_summary(verdict, c.getoption('inferbench_store'))}")
        else:
            self.lines.append(f"inferbench: no regression against {baseline}")


def _fixture(request: pytest.FixtureRequest) -> BenchmarkFixture:
    fx = _make_fixture(request)
    request.addfinalizer(fx.cleanup)
    return fx


def _make_fixture(request: pytest.FixtureRequest) -> BenchmarkFixture:
    sess: Session = request.config.stash[_SESSION]
    node = request.node
    callspec = getattr(node, "callspec", None)
    o = sess.options_for(node)
    rec = Record(name=node.name, fullname=node.nodeid, group=o.group,
                 params=dict(callspec.params) if callspec else None, options=o)
    return BenchmarkFixture(rec, lambda r: sess.records.__setitem__(r.fullname, r), disabled=sess.disabled,
                            profile=None if sess.counter else request.config.getoption("inferbench_cprofile"),
                            top=request.config.getoption("inferbench_cprofile_top"), counter=sess.counter)


@pytest.fixture
def inferbench_benchmark(request: pytest.FixtureRequest) -> BenchmarkFixture:
    """inferbench_benchmark times a function over calibrated rounds: pytest-benchmark's
    ``benchmark`` fixture, whose results --inferbench-save writes as an inferbench run."""
    return _fixture(request)


class _Alias:
    """_Alias holds the ``benchmark`` and ``benchmark_weave`` fixtures, registered only when
    pytest-benchmark is not active (its fixtures of those names are left alone)."""

    @pytest.fixture
    def benchmark(self, request: pytest.FixtureRequest) -> BenchmarkFixture:
        """benchmark is inferbench_benchmark under pytest-benchmark's name."""
        return _fixture(request)

    @pytest.fixture
    def benchmark_weave(self, benchmark: BenchmarkFixture) -> Any:
        """benchmark_weave is pytest-benchmark's: benchmark.weave."""
        return benchmark.weave
