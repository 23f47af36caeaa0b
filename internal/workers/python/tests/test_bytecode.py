"""Unit tests of inferbench_worker.bytecode: exact per-function bytecode counts."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from inferbench_worker import bytecode  # noqa: E402


def leaf(n):
    s = 0
    for k in range(n):
        s += k
    return s


def mid(n):
    return leaf(n) + leaf(n // 2)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def gen(n):
    for k in range(n):
        yield k


def top(n):
    return mid(n) + fib(6) + sum(gen(3))


class BytecodeTest(unittest.TestCase):
    def counts(self, n):
        doc = bytecode.chunk(bytecode.count(lambda: top(n)))
        return {e["name"].split(" ")[0]: e for e in doc["entries"]}, doc

    def test_same_code_same_counts(self):
        # Two counts of the same call agree to the instruction: the source needs no test.
        a, _ = self.counts(100)
        b, _ = self.counts(100)
        self.assertEqual(a, b)

    def test_more_work_in_one_function(self):
        a, _ = self.counts(100)
        b, _ = self.counts(110)
        # leaf's loop ran 15 more times (10 + 5): its own count grew, fib's did not.
        self.assertGreater(b["leaf"]["self"], a["leaf"]["self"])
        self.assertEqual(b["fib"], a["fib"])
        self.assertEqual(b["mid"]["self"], a["mid"]["self"])

    def test_inclusive_and_recursion(self):
        e, doc = self.counts(100)
        self.assertEqual(e["leaf"]["count"], 2)
        self.assertEqual(e["mid"]["incl"], e["mid"]["self"] + e["leaf"]["incl"])
        # fib(6) makes 25 calls; its inclusive count is its outermost call's, once.
        self.assertEqual(e["fib"]["count"], 25)
        self.assertEqual(e["fib"]["incl"], e["fib"]["self"])
        # A generator resumed four times is four calls of one function.
        self.assertEqual(e["gen"]["count"], 4)
        top_ = e["top"]
        self.assertEqual(top_["incl"], top_["self"] + e["mid"]["incl"] + e["fib"]["incl"] + e["gen"]["incl"])
        self.assertTrue(doc["exact"])
        self.assertEqual(doc["unit"], "op")
        edges = {(x["caller"].split(" ")[0], x["callee"].split(" ")[0]): x["incl"] for x in doc["edges"]}
        self.assertEqual(edges[("mid", "leaf")], e["leaf"]["incl"])
        self.assertNotIn(("fib", "fib"), edges)


if __name__ == "__main__":
    unittest.main()
