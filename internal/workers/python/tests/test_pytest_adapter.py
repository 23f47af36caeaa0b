"""The pytest adapter (inferbench_worker/pytest_call.py): a benchmarked pytest test run through
pytest itself in the worker, its benchmark call's function measured in the test's thread.
Needs pytest importable by this interpreter (requirements.txt installs it into .venv); skips
with the reason otherwise."""

import importlib.util
import os
import unittest

from test_worker import DATA, Worker

SUITE = os.path.join(DATA, "pytest_suite")
HAVE_PYTEST = importlib.util.find_spec("pytest") is not None


@unittest.skipUnless(HAVE_PYTEST, "pytest is not importable by this interpreter")
class PytestAdapterTest(unittest.TestCase):
    def worker(self):
        w = Worker("pytest", cwd=SUITE)
        self.addCleanup(w.close)
        return w

    def teardown(self, w):
        """teardown's reply; the worker exits after one that succeeds (close then has nothing
        to send)."""
        msg = w.send("teardown")
        if msg["ok"]:
            w.p.wait(timeout=60)
        return msg

    def measured(self, test, n=4):
        w = self.worker()
        s = w.call("setup", params={"test": test})
        self.assertEqual(s["info"]["test"], test)
        w.call("warmup", n=2)
        r = w.call("run", n=n)
        self.assertEqual(len(r["latency_ms"]), n, r)
        self.assertEqual(len(r["cpu_ms"]), n, r)
        self.assertTrue(all(x > 0 for x in r["latency_ms"]), r)
        return w, r

    def test_fixtures_and_result(self):
        # The test's own fixture (offset) applies, and the benchmark fixture returns the
        # function's result to the test: its assertion passes, so teardown succeeds.
        w, _ = self.measured("test_bench.py::test_add")
        self.assertIn("pytest", w.hello["versions"])
        self.assertTrue(self.teardown(w)["ok"])

    def test_parametrized_case(self):
        w, _ = self.measured("test_bench.py::test_param[8]")
        self.assertTrue(self.teardown(w)["ok"])

    def test_calls_run_in_the_tests_thread(self):
        # A thread-local and a context variable the test set around its call: a call made in
        # the worker's own thread would not see them, and the test's assertion would fail.
        w, _ = self.measured("test_bench.py::test_thread_state")
        self.assertTrue(self.teardown(w)["ok"], "the test's assertion on the call's result failed")

    def test_pedantic_setup_outside_the_timing(self):
        w, r = self.measured("test_bench.py::test_pedantic_setup", n=5)
        self.assertEqual(r["iter_values"]["result"], [3.0, 4.0, 5.0, 6.0, 7.0], r)
        self.assertTrue(self.teardown(w)["ok"])

    def test_pedantic_teardown_after_each_call(self):
        # The test asserts at its end that teardown ran after the calls with their arguments.
        w, _ = self.measured("test_bench.py::test_pedantic_teardown")
        self.assertTrue(self.teardown(w)["ok"])

    def test_a_test_that_cannot_be_measured(self):
        for test, code, says in [
            ("test_bench.py::test_fails_before", "failed", "broken before the call"),
            ("test_bench.py::test_no_call", "bad_params", "without calling its benchmark fixture"),
            ("test_bench.py::test_skipped", "unsupported", "no GPU here"),
            ("test_bench.py::test_absent", "bad_params", "collected no test"),
            ("absent.py::test_x", "bad_params", "want FILE::NAME"),
        ]:
            w = self.worker()
            msg = w.send("setup", params={"test": test})
            self.assertFalse(msg["ok"], test)
            self.assertEqual(msg["error"]["code"], code, (test, msg))
            self.assertIn(says, msg["error"]["message"], test)

    def test_failure_after_the_call_fails_teardown(self):
        w, _ = self.measured("test_bench.py::test_fails_after")
        msg = self.teardown(w)
        self.assertFalse(msg["ok"])
        self.assertIn("broken after the call", msg["error"]["message"])


if __name__ == "__main__":
    unittest.main()
