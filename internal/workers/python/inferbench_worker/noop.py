"""noop: an adapter that does nothing, to measure the protocol's own cost.

Params (all optional): sleep_ms (sleep in each iteration), items (items per iteration), and, for
the harness's failure tests, misbehave: "crash" (exit in run), "hang" (stop answering in run),
"garbage" (write a non-JSON line on the protocol stream), "raise" (an exception in run),
"skip" (report unsupported at setup); misbehave_after: iterations to run first; warn: a warning
the setup reply carries (what an adapter says when it cannot do all a variant asks).
"""

import os
import sys
import time

from .common import Adapter, Unsupported, get


class Noop(Adapter):
    name = "noop"
    framework = "none"

    def setup(self, params):
        self.params = params
        self.sleep = get(params, "sleep_ms", 0.0, float) / 1e3
        self.default_items = get(params, "items", 1, int)
        self.misbehave = get(params, "misbehave", "", str,
                             choices=["", "crash", "hang", "garbage", "raise", "skip"])
        self.after = get(params, "misbehave_after", 0, int)
        self.count = 0
        if self.misbehave == "skip":
            raise Unsupported("noop told to skip")
        warn = get(params, "warn", "", str)
        return {"info": {"model": "noop"}, "warnings": [warn] if warn else []}

    def run(self, n, rec, warmup):
        if not self.misbehave and not self.sleep:
            # The tightest loop: what every adapter's timing costs, with nothing inside.
            pc = time.perf_counter_ns
            lat = rec.latency_ms
            for _ in range(n):
                t0 = pc()
                t1 = pc()
                lat.append((t1 - t0) / 1e6)
            return
        Adapter.run(self, n, rec, warmup)

    def iteration(self):
        if self.sleep:
            time.sleep(self.sleep)
        self.count += 1
        if self.misbehave and self.count > self.after:
            self._misbehave()
        return None

    def _misbehave(self):
        m = self.misbehave
        self.log.warning("noop misbehaving: %s", m)
        if m == "crash":
            sys.stderr.write("noop: crashing on purpose\n")
            sys.stderr.flush()
            os._exit(3)
        if m == "hang":
            while True:
                time.sleep(3600)
        if m == "garbage":
            # Bypass the guard on the protocol stream on purpose.
            from . import protocol

            protocol.STREAM.write("this is not json\n")
            protocol.STREAM.flush()
            self.misbehave = ""
            return
        if m == "raise":
            raise RuntimeError("noop told to raise")


ADAPTER = Noop
