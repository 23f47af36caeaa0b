"""pytest: one benchmarked pytest test, run as it is.

Params:
  test      the test's node id (FILE::NAME, with [PARAMS] for a parametrized case), FILE
            relative to the definition's directory
  args      more pytest arguments (a list of strings), e.g. ["-p", "no:randomly"]
  min_iteration_ms
            as pyfunc: a call shorter than 0.1 ms is timed in batches lasting at least this long

pytest runs the test in a thread of the worker (collection, conftest.py, fixtures, marks and all)
until the test calls its benchmark fixture (`benchmark` or `inferbench_benchmark`, the
pytest-benchmark and inferbench plugins left out) with its function. From then on each
iteration is calls of that function in the test's own thread, so that what the test set around
the call (torch.no_grad(), a context variable) holds; they are timed as pyfunc times them
(latency_ms and cpu_ms per call, the function's returned numbers as values). At teardown the
fixture returns the result of one more call to the test, and the test goes on to its end: a test that
fails after its benchmark call fails the teardown, naming the test. `benchmark.pedantic(target,
args, kwargs, setup=..., teardown=...)` is taken too; with a setup or a teardown, each call is
timed alone, the two outside the timing.

A test that never calls its fixture, or fails or is skipped before calling it, fails setup with
pytest's own report (a skip is the scenario's skip).

In instruction mode callgrind counts every thread between its requests, so the test's thread is
counted with the hand-over (about 25,000 instructions a call, 0.2% of a 20,000-square loop's
count, ad hoc); the bytecode pass's trace function follows the calls into the test's thread.
"""

import os
import queue
import sys
import threading
import time

from .common import BadParams, Unsupported, WorkerError, get, require
from .pyfunc import PyFunc, flatten


# TEARDOWN_S bounds how long the rest of a test may run after its benchmark call, at teardown.
TEARDOWN_S = 60


class _Fixture:
    """_Fixture is what the test gets as its benchmark fixture: calling it hands the function
    to the worker and serves the worker's iterations in the test's thread until teardown."""

    def __init__(self, bridge):
        self._bridge = bridge
        self.extra_info = {}
        self.group = self.name = None

    def __call__(self, fn, *args, **kwargs):
        return self._bridge.serve(lambda: fn(*args, **kwargs), None, None)

    def pedantic(self, target, args=(), kwargs=None, setup=None, teardown=None, rounds=1, warmup_rounds=0, iterations=1):
        """pedantic is pytest-benchmark's: setup() before each call (it may return (args,
        kwargs)) and teardown(*args, **kwargs) after it, both outside the timing; rounds,
        warm-up rounds and iterations are the run's own here."""
        box = {"a": tuple(args), "k": dict(kwargs or {})}
        prepare = after = None
        if setup is not None:
            def prepare():
                got = setup()
                if got is not None:
                    box["a"], box["k"] = tuple(got[0]), dict(got[1] or {})
        if teardown is not None:
            def after():
                teardown(*box["a"], **box["k"])
        return self._bridge.serve(lambda: target(*box["a"], **box["k"]), prepare, after)


class _Bridge:
    """_Bridge carries the worker's requests to the test's thread and their outcome back."""

    def __init__(self):
        self.todo = queue.Queue()  # worker → test thread: ("run", fn) or ("finish", None)
        self.back = queue.Queue()  # test thread → worker: ("called", None), ("done", error), ("ended", report)
        self.calls = 0

    def serve(self, call, prepare, after):
        if self.calls:
            raise RuntimeError("inferbench's pytest adapter: the benchmark fixture can be called once per test")
        self.calls += 1
        self.call, self.prepare, self.after = call, prepare, after
        self.back.put(("called", None))
        while True:
            what, work = self.todo.get()
            if what == "finish":
                # The fixture returns the function's result, as pytest-benchmark's does: one
                # more call, after the measured ones.
                if self.prepare is not None:
                    self.prepare()
                r = self.call()
                if self.after is not None:
                    self.after()
                return r
            try:
                work()
                self.back.put(("done", None))
            except BaseException as e:  # the worker reports it as the call's failure
                self.back.put(("done", e))


class _Plugin:
    """_Plugin gives the test its benchmark fixture and keeps the test's reports."""

    def __init__(self, bridge):
        self.bridge = bridge
        self.reports = []
        self.collected = 0

    def pytest_configure(self, config):
        import pytest

        bridge = self.bridge

        class Fixtures:
            @pytest.fixture
            def benchmark(self):
                return _Fixture(bridge)

            @pytest.fixture
            def inferbench_benchmark(self):
                return _Fixture(bridge)

        config.pluginmanager.register(Fixtures(), "inferbench-worker-fixtures")

    def pytest_collection_modifyitems(self, items):
        self.collected = len(items)

    def pytest_runtest_logreport(self, report):
        if report.failed or report.skipped:
            self.reports.append(report)


class PytestCall(PyFunc):
    name = "pytest"
    framework = "python"

    def versions(self):
        try:
            import pytest

            return {"pytest": pytest.__version__}
        except ImportError:
            return {}

    def setup(self, params):
        pytest = require("pytest", "pytest")
        test = get(params, "test", None, str)
        if not test:
            raise BadParams("param test: the test's node id (FILE::NAME[PARAMS]) is required")
        path = test.split("::", 1)[0]
        if "::" not in test or not os.path.isfile(path):
            raise BadParams("param test: %s: want FILE::NAME with FILE a file (relative to %s)" % (test, os.getcwd()))
        extra = params.get("args") or []
        if not isinstance(extra, list) or not all(isinstance(a, str) for a in extra):
            raise BadParams("param args: want a list of strings, got %r" % (extra,))
        self.params, self.test = {"file": path}, test
        self.default_items = max(get(params, "batch_size", 1, int), 1)
        self.batch = 1
        self.min_iteration_ns = int(get(params, "min_iteration_ms", 1, float) * 1e6)
        self.obj = self.ttft = None
        self.bridge = _Bridge()
        self.plugin = _Plugin(self.bridge)
        args = [test, "-q", "-s", "-p", "no:cacheprovider", "-p", "no:inferbench", "-p", "no:benchmark",
                "-W", "ignore::pytest.PytestAssertRewriteWarning"] + extra
        t0 = time.perf_counter_ns()
        self.thread = threading.Thread(target=self._pytest, args=(pytest, args), name="pytest", daemon=True)
        self.thread.start()
        what, report = self.bridge.back.get()
        if what != "called":
            raise self._before(test, report)
        self.call = self.bridge.call  # what pyfunc's timing loop calls
        return {"load_time_ms": (time.perf_counter_ns() - t0) / 1e6, "info": {"test": test}}

    def _pytest(self, pytest, args):
        stdout = sys.stdout
        try:
            code = pytest.main(args, plugins=[self.plugin])
        except BaseException as e:
            code = e
        finally:
            sys.stdout = stdout
        self.bridge.back.put(("ended", code))

    def _before(self, test, code):
        """_before is the error of a test that ended without calling its benchmark fixture."""
        for r in self.plugin.reports:
            text = str(r.longrepr)[-4000:]
            if r.skipped:
                return Unsupported("%s skipped before its benchmark call: %s" % (test, text))
            return WorkerError("%s failed (%s) before its benchmark call:\n%s" % (test, r.when, text))
        if self.plugin.collected == 0:
            return BadParams("param test: pytest collected no test %s (exit status %s)" % (test, code))
        return BadParams("%s ended without calling its benchmark fixture (benchmark or inferbench_benchmark)" % test)

    def run(self, n, rec, warmup):
        """run makes n iterations in the test's thread: pyfunc's timing loop whole (the
        hand-over between the threads falls outside the timed calls), or pedantic's with its
        setup and teardown around each call."""
        b = self.bridge
        if b.prepare is None and b.after is None:
            inner = lambda: PyFunc.run(self, n, rec, warmup)
        else:
            inner = lambda: self._pedantic(n, rec)
        # A trace function of the calling thread (instruction mode's bytecode pass, bytecode.py)
        # follows the calls into the test's thread, where they run; callgrind counts every
        # thread between its zero and dump requests already (callgrind.py).
        trace = sys.gettrace()

        def work():
            if trace is None:
                return inner()
            sys.settrace(trace)
            try:
                return inner()
            finally:
                sys.settrace(None)

        b.todo.put(("run", work))
        _, err = b.back.get()
        if err is not None:
            raise err

    def _pedantic(self, n, rec):
        b, pc, ct = self.bridge, time.perf_counter_ns, time.process_time_ns
        for _ in range(n):
            if b.prepare is not None:
                b.prepare()
            c0, t0 = ct(), pc()
            r = b.call()
            t1, c1 = pc(), ct()
            if b.after is not None:
                b.after()
            vals = flatten(r)
            vals.pop("items", None)
            rec.add((t1 - t0) / 1e6, values=vals, cpu_ms=(c1 - c0) / 1e6)

    def teardown(self):
        b = getattr(self, "bridge", None)
        if b is None or not self.thread.is_alive():
            return
        b.todo.put(("finish", None))
        self.thread.join(TEARDOWN_S)
        if self.thread.is_alive():
            raise WorkerError("%s did not end within %d s after its benchmark call (its teardown or the rest of the test hangs)"
                              % (self.test, TEARDOWN_S))
        for r in self.plugin.reports:
            if r.failed:
                raise WorkerError("%s failed (%s) after its benchmark call:\n%s" % (
                    self.test, r.when, str(r.longrepr)[-4000:]))


ADAPTER = PytestCall
