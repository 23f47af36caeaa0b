"""Unit tests of inferbench_worker.common that need no framework: fakes stand in for torch."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from inferbench_worker.common import DecodeCompiled, StepMarked  # noqa: E402
from inferbench_worker.profiling import write_legacy_trace  # noqa: E402


class FakeTensor:
    """FakeTensor records its clone() in the shared log and returns a new FakeTensor."""

    def __init__(self, log, name):
        self.log, self.name = log, name

    def clone(self):
        self.log.append("clone " + self.name)
        return FakeTensor(self.log, self.name + "'")


class FakeOutput(dict):
    """FakeOutput is shaped like transformers' ModelOutput: a dict whose keys are attributes."""

    def __getattr__(self, k):
        try:
            return self[k]
        except KeyError:
            raise AttributeError(k) from None


def fake_torch(log, with_compiler=True):
    class Compiler:
        @staticmethod
        def cudagraph_mark_step_begin():
            log.append("mark")

    class Torch:
        pass

    t = Torch()
    if with_compiler:
        t.compiler = Compiler()
    return t


class StepMarkedTest(unittest.TestCase):
    """StepMarked is the fix of the compiled LLM path under CUDA graphs (transformers 5.x,
    mode reduce-overhead): every step must begin with torch.compiler.cudagraph_mark_step_begin(),
    and what a step returns must be a clone, never the graph's own output memory, which the next
    replay overwrites."""

    def test_marks_before_each_step_and_clones_logits(self):
        log = []
        graph_out = []

        def step(ids, pos=None):
            log.append("step %s" % ids)
            t = FakeTensor(log, "logits%d" % ids)
            graph_out.append(t)
            return t

        f = StepMarked(fake_torch(log), step)
        outs = [f(i, pos=i) for i in range(3)]
        self.assertEqual(log, ["mark", "step 0", "clone logits0",
                               "mark", "step 1", "clone logits1",
                               "mark", "step 2", "clone logits2"])
        self.assertEqual(f.calls, 3)
        for out, raw in zip(outs, graph_out):
            self.assertIsNot(out, raw)  # the caller never holds the graph's output
            self.assertEqual(out.name, raw.name + "'")

    def test_model_output_logits_cloned(self):
        log = []
        raw = FakeTensor(log, "logits")
        kv = object()

        def forward(**kw):
            log.append("forward")
            return FakeOutput(logits=raw, past_key_values=kv)

        out = StepMarked(fake_torch(log), forward)(input_ids=1)
        self.assertEqual(log, ["mark", "forward", "clone logits"])
        self.assertIsNot(out.logits, raw)
        self.assertEqual(out.logits.name, "logits'")
        self.assertIs(out["past_key_values"], kv)  # the rest passes through untouched

    def test_without_torch_compiler(self):
        """torch < 2.0 has no torch.compiler: nothing to mark, the step still runs and is cloned."""
        log = []
        f = StepMarked(fake_torch(log, with_compiler=False), lambda x: FakeTensor(log, "y"))
        f(1)
        self.assertEqual(log, ["clone y"])
        self.assertEqual(f.calls, 1)

    def test_signature_of_wrapped(self):
        """transformers reads forward's signature: StepMarked shows the wrapped function's."""
        import inspect

        def forward(input_ids, attention_mask=None, cache_position=None):
            return None

        f = StepMarked(fake_torch([]), forward)
        self.assertEqual(list(inspect.signature(f).parameters),
                         ["input_ids", "attention_mask", "cache_position"])


class Ids:
    """Ids stands in for a batch of token ids: only its shape is read."""

    def __init__(self, batch, length):
        self.shape = (batch, length)


class DecodeCompiledTest(unittest.TestCase):
    """DecodeCompiled is the fix of the compiled transformers LLM on CUDA: StepMarked alone still
    failed on an H100 (torch 2.11, transformers 5.17), because the compiled prefill created the
    static cache inside a CUDA graph. The prefill must run eagerly, unmarked and uncloned, and
    every decode step compiled and marked, whichever way generate passes the ids."""

    def test_prefill_eager_decode_compiled(self):
        log = []

        def eager(input_ids=None, **kw):
            log.append("eager %d" % input_ids.shape[1])
            return FakeOutput(logits=FakeTensor(log, "prefill"))

        def compiled(input_ids=None, **kw):
            log.append("compiled %d" % input_ids.shape[1])
            return FakeOutput(logits=FakeTensor(log, "step"))

        f = DecodeCompiled(fake_torch(log), eager, compiled)
        for _ in range(2):  # two generate calls: a prefill of 8 positions, then 3 decode steps
            f(input_ids=Ids(2, 8), cache_position=None)
            for _ in range(3):
                f(input_ids=Ids(2, 1))
        one = ["eager 8"] + ["mark", "compiled 1", "clone step"] * 3
        self.assertEqual(log, one + one)
        self.assertEqual(f.prefills, 2)
        self.assertEqual(f.calls, 6)

    def test_positional_and_embeds(self):
        log = []
        f = DecodeCompiled(fake_torch(log),
                           lambda *a, **k: log.append("eager") or FakeTensor(log, "e"),
                           lambda *a, **k: log.append("compiled") or FakeTensor(log, "c"))
        f(Ids(1, 5))
        f(Ids(1, 1))
        f(inputs_embeds=Ids(1, 5))
        f(inputs_embeds=Ids(1, 1))
        self.assertEqual(log, ["eager", "mark", "compiled", "clone c",
                               "eager", "mark", "compiled", "clone c"])

    def test_signature_of_eager(self):
        import inspect

        def forward(input_ids, attention_mask=None, cache_position=None):
            return None

        f = DecodeCompiled(fake_torch([]), forward, lambda *a, **k: None)
        self.assertEqual(list(inspect.signature(f).parameters),
                         ["input_ids", "attention_mask", "cache_position"])



class FakeRange:
    def __init__(self, start, dur):
        self.start, self.dur = start, dur

    def elapsed_us(self):
        return self.dur


class FakeEvent:
    """FakeEvent is shaped like a legacy torch profiler FunctionEvent."""

    def __init__(self, name, start, dur, shapes, trace_name=""):
        self.trace_name = name if trace_name == "" else trace_name
        self.time_range = FakeRange(start, dur)
        self.thread = 1
        self.input_shapes = shapes


class LegacyTraceTest(unittest.TestCase):
    """A torch without Kineto (Debian's 1.13) exports the Chrome trace as a bare list with empty
    args: the profile tests failed under /usr/bin/python3 ("list indices must be integers or
    slices, not str", then no "Input Dims"). Its trace is written from the profiler's events in
    torch 2.x's form, shapes included."""

    def test_events_with_shapes(self):
        import json
        import tempfile

        events = [FakeEvent("aten::mm", 10, 5, [[4, 4], [4, 3]]),
                  FakeEvent("aten::empty", 16, 1, [[], []]),
                  FakeEvent("hidden", 20, 1, [], trace_name=None)]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "torch_trace.json")
            write_legacy_trace(events, path)
            with open(path) as f:
                trace = json.load(f)
        self.assertEqual(trace, {"traceEvents": [
            {"name": "aten::mm", "ph": "X", "ts": 10, "dur": 5, "tid": 1, "pid": "CPU functions",
             "args": {"Input Dims": [[4, 4], [4, 3]]}},
            {"name": "aten::empty", "ph": "X", "ts": 16, "dur": 1, "tid": 1,
             "pid": "CPU functions", "args": {}}]})


if __name__ == "__main__":
    unittest.main()


class PeakRSSTest(unittest.TestCase):
    """The worker's memory_mb is its own peak, not the memory of the process that started it."""

    @unittest.skipUnless(sys.platform.startswith("linux"), "ru_maxrss is carried across exec on Linux only")
    def test_peak_is_not_inherited_across_exec(self):
        import subprocess
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        # A parent that touches 300 MiB, then execs a Python that reports its peak.
        child = "import sys; sys.path.insert(0, %r); from inferbench_worker.common import peak_rss_mb; print(peak_rss_mb())" % here
        parent = ("import os, sys; b = bytearray(300 * 2**20); b[::4096] = b'x' * len(b[::4096]); "
                  "os.execv(sys.executable, [sys.executable, '-c', %r])" % child)
        out = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=60, check=True)
        peak = float(out.stdout.strip())
        self.assertLess(peak, 150, "the child's peak %.1f MiB includes its parent's 300 MiB" % peak)
        self.assertGreater(peak, 1)
