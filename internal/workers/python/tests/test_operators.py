"""Unit tests of inferbench_worker.operators (per-operator counts of a torch model in instruction
mode) and of callgrind.read_ir, which reads each operator's dump. The counts themselves come
from callgrind: here a fake window stands in for it, and the Go test TestCountedTorchOperators
runs the real one under valgrind."""

import gc
import json
import os
import sys
import tempfile
import unittest
import unittest.mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from inferbench_worker import callgrind, operators  # noqa: E402

REQUIRE = {w.strip() for w in os.environ.get("INFERBENCH_REQUIRE", "").split(",") if w.strip()}

try:
    import torch
except ImportError:  # the reason is given by the skip (or the failure) below
    torch = None


def need_torch(test):
    if torch is not None:
        return test
    if REQUIRE & {"frameworks", "all"}:
        return unittest.expectedFailure(test)  # reported, not skipped: torch must be there
    return unittest.skip("torch is not importable by %s" % sys.executable)(test)


class Window:
    """Window stands in for callgrind: each dump returns the number of the window (1, 2, ...), so
    a test can tell which operator call each count came from, and it checks that windows do not
    overlap."""

    def __init__(self):
        self.open = False
        self.n = 0
        self.threads = []

    def zero(self):
        assert not self.open, "zero inside an open window"
        self.open = True
        self.threads.append(torch.get_num_threads())

    def dump(self):
        assert self.open, "dump without zero"
        self.open = False
        self.n += 1
        return 1000


class OperatorsTest(unittest.TestCase):
    def model(self, relus=2, inference=False):
        x = torch.ones(4, 8)
        w = torch.ones(16, 8)
        b = torch.ones(16)

        def call():
            with (torch.inference_mode() if inference else torch.no_grad()):
                # with autograd's key on (no_grad, not inference_mode), the composite
                # aten::linear arrives decomposed: aten::t, aten::addmm
                y = torch.nn.functional.linear(x, w, b)
                for _ in range(relus):
                    y = torch.relu(y)
                torch.mul(y, 2.0)

        return call

    @need_torch
    def test_keys_counts_and_chunks(self):
        win = Window()
        threads, enabled = torch.get_num_threads(), gc.isenabled()
        chunks = operators.count(self.model(), win, chunks=3)
        self.assertEqual(len(chunks), 3)
        want = {
            "aten::t [16×8]": 1,
            "aten::addmm [16, 4×8, 8×16]": 1,
            "aten::relu [4×16]": 2,
            "aten::mul [4×16]": 1,  # the scalar is no shape
        }
        for c in chunks:
            self.assertEqual(c["calls"], 1)
            got = {e["name"]: e["count"] for e in c["entries"]}
            self.assertEqual(got, want)
            for e in c["entries"]:
                self.assertEqual(e["self"], 1000 * e["count"])
                self.assertEqual(e["incl"], e["self"])
                self.assertEqual(c["stacks"][e["name"]], e["self"])
        # One window an operator call, of the warm-up call (its counts dropped) and of the counted
        # chunks, on the worker's threads (changing them would disturb the next measured call);
        # the collector is as it was.
        self.assertEqual(win.n, (operators.WARMUP + 3) * 5)
        self.assertEqual(set(win.threads), {threads})
        self.assertEqual(torch.get_num_threads(), threads)
        self.assertEqual(gc.isenabled(), enabled)

    @need_torch
    def test_inference_mode_keeps_composites(self):
        c = operators.count(self.model(inference=True), Window(), chunks=1)[0]
        self.assertEqual({e["name"]: e["count"] for e in c["entries"]},
                         {"aten::linear [4×8, 16×8, 16]": 1, "aten::relu [4×16]": 2, "aten::mul [4×16]": 1})

    @need_torch
    def test_one_operator_more(self):
        a = operators.count(self.model(relus=2), Window(), chunks=1)[0]
        b = operators.count(self.model(relus=3), Window(), chunks=1)[0]
        ea = {e["name"]: e for e in a["entries"]}
        eb = {e["name"]: e for e in b["entries"]}
        self.assertEqual(eb["aten::relu [4×16]"]["self"] - ea["aten::relu [4×16]"]["self"], 1000)
        for k in ea:
            if k != "aten::relu [4×16]":
                self.assertEqual(ea[k], eb[k], k)

    @need_torch
    def test_profile_writes_operators_json(self):
        with tempfile.TemporaryDirectory() as d:
            path = operators.profile(self.model(), Window(), d)
            self.assertEqual(path, os.path.join(d, "operators.json"))
            with open(path) as f:
                doc = json.load(f)
            self.assertEqual((doc["source"], doc["unit"], doc["exact"]), ("operators", "Ir", True))
            self.assertEqual(len(doc["chunks"]), operators.CHUNKS)
            # A call that runs no operator writes nothing, and is not made again once the
            # warm-up call has shown it.
            calls = []
            self.assertIsNone(operators.profile(lambda: calls.append(1), Window(), os.path.join(d, "none")))
            self.assertEqual(len(calls), operators.WARMUP)
            self.assertFalse(os.path.exists(os.path.join(d, "none", "operators.json")))

    @need_torch
    def test_limit(self):
        # A call with more operator calls than the pass counts makes no dump when prepare has
        # counted them uninstrumented, and stops after its warm-up otherwise; the message names
        # the variable that raises the limit.
        call = self.model(relus=6)  # t, addmm, 6 relus, mul: 9 operator calls
        with tempfile.TemporaryDirectory() as d, \
                unittest.mock.patch.dict(os.environ, {operators.LIMIT_ENV: "8"}):
            operators.prepare(call)
            w = Window()
            with self.assertRaisesRegex(operators.TooMany, "9 torch operator calls, more than the 8.*"
                                        + operators.LIMIT_ENV):
                operators.profile(call, w, d)
            self.assertEqual(w.n, 0)
            self.assertFalse(os.path.exists(os.path.join(d, "operators.json")))
            w = Window()
            with self.assertRaises(operators.TooMany):
                operators.profile(call, w, d)  # not prepared: found by the warm-up call
            self.assertEqual(w.n, 9 * operators.WARMUP)
        with tempfile.TemporaryDirectory() as d, \
                unittest.mock.patch.dict(os.environ, {operators.LIMIT_ENV: "9"}):
            operators.prepare(call)
            w = Window()
            self.assertTrue(operators.profile(call, w, d).endswith("operators.json"))
            self.assertEqual(w.n, 9 * (operators.WARMUP + operators.CHUNKS))
        with unittest.mock.patch.dict(os.environ, {operators.LIMIT_ENV: "many"}):
            with self.assertRaisesRegex(ValueError, operators.LIMIT_ENV):
                operators.limit()


class ReadIrTest(unittest.TestCase):
    def write(self, text):
        f = tempfile.NamedTemporaryFile("w", suffix=".out", delete=False)
        f.write(text)
        f.close()
        self.addCleanup(os.remove, f.name)
        return f.name

    def test_summary_then_totals(self):
        head = "# callgrind format\nversion: 1\npositions: line\nevents: Ir Dr Dw I1mr\n"
        body = "fn=(1) f\n0 10 2 1\n"
        # summary: what was counted since the last zero, before the totals of the cost lines
        self.assertEqual(callgrind.read_ir(self.write(head + "summary: 12345 1 2 3\n" + body + "totals: 999 1 1 1\n")), 12345)
        self.assertEqual(callgrind.read_ir(self.write(head + body + "totals: 999 1 1 1\n")), 999)
        # Ir not first among the events
        self.assertEqual(callgrind.read_ir(self.write("events: Dr Ir\nsummary: 5 77\n")), 77)
        with self.assertRaises(ValueError):
            callgrind.read_ir(self.write("events: Dr\nsummary: 5\n"))


if __name__ == "__main__":
    unittest.main()


class Counted:
    """Counted stands in for callgrind.Counter in the protocol's counted run."""

    def __init__(self):
        self.instrumented = False
        self.dumps = 0

    def instrument(self):
        self.instrumented = True

    def count(self, call):
        call()
        self.dumps += 1


class ProtocolTest(unittest.TestCase):
    @need_torch
    def test_failed_pass_keeps_the_run(self):
        # The operator pass is what explain reads, not what was measured: when it fails, the run
        # reply still counts its calls and says how many dumps the pass made.
        import io
        import logging

        from inferbench_worker import noop, protocol

        log = logging.getLogger("test")
        srv = protocol.Server(io.StringIO(), log)
        srv.adapter = noop.ADAPTER(log)
        srv.adapter.setup({})
        srv.is_setup = True
        counter = Counted()

        def fail(call, window, out_dir):
            window.dumps += 5
            raise ValueError("no dump file")

        with tempfile.TemporaryDirectory() as d, \
                unittest.mock.patch.object(protocol, "COUNTER", counter), \
                unittest.mock.patch.object(operators, "profile", fail), \
                unittest.mock.patch.dict(os.environ, {protocol.BYTECODE_ENV: d}), \
                self.assertLogs(log, "WARNING"):
            out = srv._run({"n": 2}, False)
        self.assertEqual(out["counted"], 2)
        self.assertEqual(out["other_dumps"], 5)
        self.assertNotIn("operators", out)
        self.assertTrue(out["bytecode"].endswith("bytecode.json"))
