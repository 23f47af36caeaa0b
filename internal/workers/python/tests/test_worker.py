"""Tests of the worker protocol against real worker processes.

Run: /usr/bin/python3 -m unittest discover -s internal/workers/python
Torch tests skip with the reason when torch is not importable by this interpreter, and fail
instead when INFERBENCH_REQUIRE names frameworks (see need).
"""

import functools
import importlib.util
import json
import os
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, "testdata")

sys.path.insert(0, ROOT)

from inferbench_worker import discover  # noqa: E402
from inferbench_worker.common import Recorder  # noqa: E402
from inferbench_worker.pyfunc import flatten  # noqa: E402

HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_TV = HAVE_TORCH and importlib.util.find_spec("torchvision") is not None
HAVE_JAX = importlib.util.find_spec("jax") is not None
HAVE_ORT = importlib.util.find_spec("onnxruntime") is not None

# INFERBENCH_REQUIRE: what must be there (frameworks, llama-server, all), as for the Go tests
# (internal/testkit/require). CI sets it so that a framework that does not import fails instead of
# skipping (docs/frameworks.md, "Skips that fail").
REQUIRE = {w.strip() for w in os.environ.get("INFERBENCH_REQUIRE", "").split(",") if w.strip()}


def need(cond, reason, what="frameworks"):
    """need is unittest.skipUnless(cond, reason), except that where INFERBENCH_REQUIRE names
    what (or all) a test or class whose condition does not hold fails with the reason."""
    if cond:
        return lambda x: x
    if what not in REQUIRE and "all" not in REQUIRE:
        return unittest.skip(reason)
    msg = "INFERBENCH_REQUIRE has %s: %s" % (what, reason)

    def fail(x):
        if isinstance(x, type):
            def setUpClass(cls):
                raise AssertionError(msg)

            x.setUpClass = classmethod(setUpClass)
            return x

        @functools.wraps(x)
        def failing(self, *args, **kwargs):
            self.fail(msg)

        return failing

    return fail


class Worker:
    """Worker is a real worker process spoken to line by line."""

    def __init__(self, adapter, cwd=None, env=None):
        env = dict(os.environ, PYTHONPATH=ROOT, PYTHONDONTWRITEBYTECODE="1",
                   OMP_NUM_THREADS="1", INFERBENCH_WORKER_LOG="WARNING", **(env or {}))
        self.p = subprocess.Popen([sys.executable, "-m", "inferbench_worker"], cwd=cwd or ROOT,
                                  env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.id = 0
        self.hello = self.call("hello", adapter=adapter)

    def send(self, op, **kw):
        self.id += 1
        kw.update(id=self.id, op=op)
        try:
            self.p.stdin.write(json.dumps(kw) + "\n")
            self.p.stdin.flush()
            line = self.p.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            # The worker is gone: its exit status (a negative signal number when killed, -9
            # for the kernel's out-of-memory killer) and what it said.
            try:
                code = self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                code = "still running"
            raise AssertionError("worker gone before answering %s (exit status %s); stderr: %s"
                                 % (op, code, self.p.stderr.read()[-2000:]))
        msg = json.loads(line)
        assert msg["id"] == self.id, msg
        return msg

    def call(self, op, **kw):
        msg = self.send(op, **kw)
        if not msg["ok"]:
            raise AssertionError("%s failed: %s" % (op, msg["error"]))
        return msg

    def close(self):
        try:
            if self.p.poll() is None:
                self.send("teardown")
        finally:
            try:
                self.p.stdin.close()
            except BrokenPipeError:  # the worker is gone already; its status is waited for below
                pass
            try:
                # A worker exits when its stdin closes. Exiting a process that imported torch,
                # JAX or transformers (and inductor's compile workers) took over 30 s on a
                # machine with a load average of 23; 120 s bounds a real hang.
                self.p.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
                raise
            finally:
                self.p.stdout.close()
                self.p.stderr.close()


def _alive(pid):
    """_alive reports whether pid runs (a zombie awaiting its reaper does not)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class ProtocolTest(unittest.TestCase):
    def worker(self, adapter, **kw):
        w = Worker(adapter, **kw)
        self.addCleanup(w.close)
        return w

    def test_noop_lifecycle(self):
        w = self.worker("noop")
        self.assertEqual(w.hello["protocol"], 1)
        self.assertEqual(w.hello["adapter"], "noop")
        self.assertIn("python", w.hello["versions"])
        s = w.call("setup", params={"items": 4})
        self.assertGreaterEqual(s["load_time_ms"], 0)
        warm = w.call("warmup", n=3)
        self.assertEqual(len(warm["latency_ms"]), 3)
        r = w.call("run", n=1000)
        self.assertEqual(r["n"], 1000)
        self.assertEqual(len(r["latency_ms"]), 1000)
        self.assertEqual(r["items"], 4)
        # An empty iteration costs the two clock reads and nothing else: well under 50 us.
        self.assertLess(sorted(r["latency_ms"])[500], 0.05)
        self.assertIn("memory_mb", r["values"])

    def test_errors_are_structured(self):
        w = self.worker("noop")
        cases = [
            ({"op": "run", "n": 1}, "bad_params"),           # run before setup
            ({"op": "frobnicate"}, "bad_request"),           # unknown op
        ]
        for req, code in cases:
            op = req.pop("op")
            msg = w.send(op, **req)
            self.assertFalse(msg["ok"])
            self.assertEqual(msg["error"]["code"], code, msg)
        msg = w.send("setup", params={"misbehave": "skip"})
        self.assertEqual(msg["error"]["code"], "unsupported")
        w.call("setup", params={"misbehave": "raise"})
        msg = w.send("run", n=2)
        self.assertEqual(msg["error"]["code"], "failed")
        self.assertIn("noop told to raise", msg["error"]["message"])
        self.assertIn("Traceback", msg["error"]["traceback"])
        w.call("setup", params={})  # the worker survives an adapter's exception
        self.assertEqual(w.call("run", n=2)["n"], 2)

    def test_unknown_adapter(self):
        p = subprocess.run([sys.executable, "-m", "inferbench_worker"], cwd=ROOT,
                           input='{"id":1,"op":"hello","adapter":"nope"}\n', text=True,
                           capture_output=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=60)
        msg = json.loads(p.stdout.splitlines()[0])
        self.assertEqual(msg["error"]["code"], "bad_params")
        self.assertIn("unknown adapter", msg["error"]["message"])

    def test_prints_never_reach_the_protocol(self):
        w = self.worker("pyfunc", cwd=DATA)
        w.call("setup", params={"file": "seed_bench.py", "function": "run_sum_benchmark",
                                "size": 10})
        r = w.call("run", n=3)  # the function prints on every call
        self.assertEqual(len(r["latency_ms"]), 3)
        self.assertIn("execution_time", r["iter_values"])
        self.assertEqual(r["iter_values"]["nested_size_100_time"], [0.5, 0.5, 0.5])
        self.assertNotIn("label", r["iter_values"])

    def test_pyfunc_items(self):
        # Throughput counts items: a returned {"items": n}, else batch_size, else 1 per call.
        w = self.worker("pyfunc", cwd=DATA)
        w.call("setup", params={"file": "seed_bench.py", "function": "benchmark_items", "n": 5})
        r = w.call("run", n=2)
        self.assertEqual(r["items"], 5)
        self.assertNotIn("items", r["iter_values"])
        w.call("setup", params={"file": "seed_bench.py", "function": "benchmark_noop",
                                "batch_size": 8})
        self.assertEqual(w.call("run", n=2)["items"], 8)

    def test_cpu_ms_beside_latency(self):
        # Every iteration's CPU time (the process's clock) comes with its wall time.
        w = self.worker("pyfunc", cwd=DATA)
        w.call("setup", params={"file": "seed_bench.py", "function": "run_sum_benchmark",
                                "size": 20000})
        r = w.call("run", n=3)
        self.assertEqual(len(r["cpu_ms"]), 3, r)
        for cpu, lat in zip(r["cpu_ms"], r["latency_ms"]):
            self.assertGreater(cpu, 0, r)
            self.assertLessEqual(cpu, lat * 1.05 + 0.5, r)

    def test_pyfunc_batches_short_calls(self):
        # A call shorter than the timers can resolve is timed in batches after the warm-up:
        # latency_ms and cpu_ms per call, items per batch. min_iteration_ms 0: one call.
        w = self.worker("pyfunc", cwd=DATA)
        w.call("setup", params={"file": "seed_bench.py", "function": "benchmark_noop"})
        w.call("warmup", n=3)
        r = w.call("run", n=2)
        items = r["items"] if isinstance(r["items"], list) else [r["items"]] * 2
        self.assertTrue(all(k >= 100 for k in items), r)
        self.assertTrue(all(x < 0.1 for x in r["latency_ms"]), r)
        self.assertEqual(r["iter_values"]["result"], [42.0, 42.0])
        w.call("setup", params={"file": "seed_bench.py", "function": "benchmark_noop",
                                "min_iteration_ms": 0})
        w.call("warmup", n=3)
        self.assertEqual(w.call("run", n=2)["items"], 1)

    def test_batch_for(self):
        from inferbench_worker.pyfunc import batch_for

        self.assertEqual(batch_for(5_000_000, 1, 1_000_000), 1)  # 5 ms: one call
        self.assertEqual(batch_for(200_000, 1, 1_000_000), 1)  # 0.2 ms: one call
        self.assertEqual(batch_for(1_000, 1, 1_000_000), 100)  # 1 µs: grows at most 100-fold
        self.assertEqual(batch_for(100_000, 100, 1_000_000), 1000)  # 1 µs a call: 1 ms
        self.assertEqual(batch_for(1_000, 1, 0), 1)  # batching off

    def test_pyfunc_profile(self):
        # --profile: cProfile's .prof of n calls, apart from the measured ones.
        import pstats
        import tempfile

        w = self.worker("pyfunc", cwd=DATA)
        # A function that does not print: chunks last 0.1 s, thousands of calls here, and
        # this harness does not read the worker's stderr.
        w.call("setup", params={"file": "seed_bench.py", "function": "benchmark_items"})
        with tempfile.TemporaryDirectory() as d:
            files = w.call("profile", n=3, dir=d)["files"]
            # cProfile's dump, explain's chunks (issue 34) and the memory profile:
            # tracemalloc's top lines (issue 23)
            chunks = [os.path.join(d, "python-%d.json" % k) for k in range(1, 9)]
            self.assertEqual(files, [os.path.join(d, "python.prof")] + chunks + [os.path.join(d, "memory_top.txt")])
            st = pstats.Stats(files[0])
            self.assertTrue(any(k[2] == "benchmark_items" for k in st.stats), list(st.stats)[:5])
            with open(files[-1]) as f:
                top = f.read()
            self.assertIn("file:line", top)
            # Each chunk: its calls (n/8 at least, as many as last 0.1 s), the user's function
            # with its calls, own time and time with callees, and no frame of the worker's.
            for path in chunks:
                with open(path) as f:
                    c = json.load(f)
                self.assertEqual((c["source"], c["unit"]), ("python", "ms"))
                self.assertGreaterEqual(c["calls"], 1)
                bench = [e for e in c["entries"] if e["name"].startswith("benchmark_items (seed_bench.py:")]
                self.assertEqual(len(bench), 1, [e["name"] for e in c["entries"]][:10])
                self.assertEqual(bench[0]["count"], c["calls"])
                self.assertGreaterEqual(bench[0]["incl"], bench[0]["self"])
                self.assertFalse([e for e in c["entries"] if "inferbench_worker" in e["name"] or "pyfunc.py" in e["name"]])

    def test_pyfunc_class(self):
        w = self.worker("pyfunc", cwd=DATA)
        w.call("setup", params={"file": "seed_class.py", "class": "TinyModelBenchmark",
                                "max_new_tokens": 4})
        r = w.call("run", n=2)
        v = r["iter_values"]
        self.assertEqual(v["ttft_ms"], [2.0, 2.0])
        self.assertTrue(all(x >= 1.0 for x in v["reported_latency_ms"]), v)
        self.assertTrue(all(x >= 1.0 for x in r["latency_ms"]), r)
        self.assertIn("tokens_per_s", v)

    def test_pyfunc_missing_argument(self):
        w = self.worker("pyfunc", cwd=DATA)
        msg = w.send("setup", params={"file": "needs_arg.py", "function": "run_needs"})
        self.assertEqual(msg["error"]["code"], "bad_params")
        self.assertIn("'count'", msg["error"]["message"])
        w.call("setup", params={"file": "needs_arg.py", "function": "run_needs", "count": 7})
        self.assertEqual(w.call("run", n=1)["iter_values"], {"result": [7.0]})

    def test_exits_when_orphaned(self):
        # A harness killed mid-batch leaves no worker behind: the worker's parent here is a
        # shell that exits at once, and the worker's stdin stays open (a sleeping writer).
        env = dict(os.environ, PYTHONPATH=ROOT)
        out = subprocess.run(["sh", "-c", "sleep 20 2>/dev/null | %s -m inferbench_worker >/dev/null 2>&1 & echo $!; sleep 1"
                              % sys.executable], env=env, capture_output=True, text=True,
                             timeout=30).stdout
        pid = int(out.split()[0])
        deadline = time.time() + 10
        while time.time() < deadline and _alive(pid):
            time.sleep(0.1)
        self.assertFalse(_alive(pid), "orphaned worker %d still running" % pid)

    @unittest.skipIf(HAVE_JAX, "jax is installed: the unavailable path cannot be checked")
    def test_jax_unavailable(self):
        p = subprocess.run([sys.executable, "-m", "inferbench_worker"], cwd=ROOT,
                           input='{"id":1,"op":"hello","adapter":"jax_vision"}\n', text=True,
                           capture_output=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=60)
        msg = json.loads(p.stdout.splitlines()[0])
        self.assertEqual(msg["error"]["code"], "unavailable")
        self.assertIn("jax", msg["error"]["message"])

    @unittest.skipIf(HAVE_ORT, "onnxruntime is installed: the unavailable path cannot be checked")
    def test_onnxruntime_unavailable(self):
        p = subprocess.run([sys.executable, "-m", "inferbench_worker"], cwd=ROOT,
                           input='{"id":1,"op":"hello","adapter":"onnxruntime"}\n', text=True,
                           capture_output=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=60)
        msg = json.loads(p.stdout.splitlines()[0])
        self.assertEqual(msg["error"]["code"], "unavailable")


@need(HAVE_TV, "torch and torchvision are not importable by %s" % sys.executable)
class TorchVisionTest(unittest.TestCase):
    def test_resnet18_small(self):
        w = Worker("torch_vision")
        self.addCleanup(w.close)
        self.assertEqual(w.hello["framework"], "pytorch")
        self.assertIn("torch", w.hello["versions"])
        s = w.call("setup", params={"model": "resnet18", "image_size": 32, "batch_size": 2,
                                    "device": "cpu", "threads": 1})
        self.assertEqual(s["info"]["parameters"], "11689512")
        self.assertEqual(s["device"], "cpu")
        r = w.call("run", n=2)
        self.assertEqual(r["items"], 2)
        self.assertTrue(all(x > 0 for x in r["latency_ms"]))
        self.assertGreater(r["values"]["memory_mb"], 50)

    def test_variants(self):
        import torch

        w = Worker("torch_vision")
        self.addCleanup(w.close)
        base = {"model": "resnet18", "image_size": 32, "device": "cpu", "threads": 1}
        w.call("setup", params=dict(base, variant="channels_last", dtype="bfloat16"))
        self.assertEqual(w.call("run", n=1)["n"], 1)
        msg = w.send("setup", params=dict(base, dtype="float64"))
        self.assertEqual(msg["error"]["code"], "bad_params")
        msg = w.send("setup", params=dict(base, model="not_a_model"))
        self.assertEqual(msg["error"]["code"], "bad_params")
        if not hasattr(torch, "compile"):
            msg = w.send("setup", params=dict(base, variant="compiled"))
            self.assertEqual(msg["error"]["code"], "unsupported")
            self.assertIn("torch.compile", msg["error"]["message"])
        if not torch.cuda.is_available():
            msg = w.send("setup", params=dict(base, device="cuda"))
            self.assertEqual(msg["error"]["code"], "unsupported")

    def test_image_folder(self):
        import tempfile

        import torch
        from torchvision.io import write_png

        d = tempfile.mkdtemp()
        self.addCleanup(lambda: [os.remove(os.path.join(d, f)) for f in os.listdir(d)])
        for i in range(3):
            write_png(torch.randint(0, 255, (3, 20, 30), dtype=torch.uint8),
                      os.path.join(d, "img%d.png" % i))
        w = Worker("torch_vision")
        self.addCleanup(w.close)
        s = w.call("setup", params={"model": "resnet18", "image_size": 32, "batch_size": 2,
                                    "input": d, "device": "cpu"})
        self.assertEqual(s["info"]["input"], d)
        self.assertEqual(w.call("run", n=2)["items"], 2)


@need(HAVE_TORCH, "torch is not importable by %s" % sys.executable)
class TorchLLMTest(unittest.TestCase):
    def test_tiny_generation(self):
        w = Worker("torch_llm")
        self.addCleanup(w.close)
        s = w.call("setup", params={"backend": "torch", "prompt_tokens": 8, "max_new_tokens": 5,
                                    "batch_size": 2, "device": "cpu", "threads": 1})
        self.assertEqual(s["info"]["backend"], "torch")
        r = w.call("run", n=2)
        self.assertEqual(r["output_tokens"], 10)
        self.assertEqual(r["input_tokens"], 16)
        self.assertEqual(r["token_count"], 2)
        for i in range(2):
            toks = r["token_ms"][i]
            self.assertEqual(len(toks), 5)
            self.assertEqual(toks, sorted(toks))
            self.assertEqual(r["ttft_ms"][i], toks[0])
            self.assertEqual(r["latency_ms"][i], toks[-1])

    def test_kernelized_without_kernels_is_unsupported(self):
        w = Worker("torch_llm")
        self.addCleanup(w.close)
        msg = w.send("setup", params={"backend": "torch", "variant": "kernelized"})
        self.assertEqual(msg["error"]["code"], "unsupported")


class UnitTest(unittest.TestCase):
    def test_recorder_columns(self):
        rec = Recorder()
        rec.add(1.0)
        rec.add(2.0, values={"a": 3, "s": "x"})
        rec.add(3.0, ttft_ms=0.5)
        out = rec.to_json(default_items=8)
        self.assertEqual(out["items"], 8)
        self.assertEqual(out["iter_values"], {"a": [None, 3.0, None]})
        self.assertEqual(out["ttft_ms"], [None, None, 0.5])
        self.assertNotIn("metrics", out)

    def test_recorder_declared_metrics(self):
        rec = Recorder()
        rec.add(1.0, values={"throughput": {"value": 1000, "unit": "items/s", "better": "higher"}})
        out = rec.to_json()
        self.assertEqual(out["iter_values"], {"throughput": [1000.0]})
        self.assertEqual(out["metrics"], {"throughput": {"unit": "items/s", "better": "higher"}})

    def test_pyfunc_declared_figure(self):
        # A benchmark function's {"value", "unit", "better"} figure keeps its declaration
        # through flatten (it was flattened to "widgets_value", with no direction).
        vals = flatten({"widgets": {"value": 800, "unit": "items", "better": "higher"},
                        "nested": {"a": 1}})
        self.assertEqual(vals, {"widgets": {"value": 800.0, "unit": "items", "better": "higher"},
                                "nested_a": 1.0})
        rec = Recorder()
        rec.add(1.0, values=vals)
        out = rec.to_json()
        self.assertEqual(out["iter_values"], {"widgets": [800.0], "nested_a": [1.0]})
        self.assertEqual(out["metrics"], {"widgets": {"unit": "items", "better": "higher"}})

    def test_discover(self):
        got = discover.discover_file(os.path.join(DATA, "seed_bench.py"))
        self.assertEqual([f["name"] for f in got["functions"]],
                         ["run_sum_benchmark", "benchmark_noop", "benchmark_items"])
        got = discover.discover_file(os.path.join(DATA, "seed_class.py"))
        self.assertEqual([c["name"] for c in got["classes"]], ["TinyModelBenchmark"])
        # the seed runner's entry point (it names the class) is not listed
        self.assertEqual([f["name"] for f in got["functions"]], ["benchmark_kept"])
        self.assertIn("measure_time_to_first_token", got["classes"][0]["methods"])
        # a run_* helper another function calls is not listed (seed 003)
        got = discover.discover_file(os.path.join(DATA, "seed_helper.py"))
        self.assertEqual([f["name"] for f in got["functions"]], ["benchmark_training_overhead"])


if __name__ == "__main__":
    unittest.main()
