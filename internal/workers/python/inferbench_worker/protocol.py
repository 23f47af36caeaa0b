"""The worker protocol's main loop: one JSON request per line on stdin, one JSON reply per line on
stdout, logs on stderr. See docs/worker-protocol.md for the messages.

Before anything else runs, the real stdout is moved to a private file descriptor and fd 1 is
pointed at stderr, so that a print() in a model, a benchmark function or a C library can never
corrupt the protocol stream.
"""

import importlib
import json
import logging
import os
import platform
import sys
import time
import traceback

from . import PROTOCOL, __version__
from .common import BadParams, Recorder, WorkerError

# ADAPTERS maps an adapter name to the module that defines it (module attribute ADAPTER).
ADAPTERS = {
    "noop": "noop",
    "torch_vision": "torch_vision",
    "torch_llm": "torch_llm",
    "jax_vision": "jax_vision",
    "onnxruntime": "ort",
    "pyfunc": "pyfunc",
    "pytest": "pytest_call",
}

# STREAM is the protocol stream once main has started (the noop adapter's garbage test uses it).
STREAM = None

# COUNTER brackets measured calls with callgrind's client requests in instruction mode
# (callgrind.py); None otherwise.
COUNTER = None

# BYTECODE_ENV names the folder where instruction mode writes bytecode.json, the bytecode
# instructions of each Python function in one call (bytecode.py), and, where the worker has
# imported torch, operators.json, the instructions of each torch operator (operators.py); the
# harness sets it.
BYTECODE_ENV = "INFERBENCH_WORKER_BYTECODE"

# MODULES maps an adapter to the python modules it needs (mirrored by the Go side's Requires).
MODULES = {
    "pytest": ["pytest"],
    "torch_vision": ["torch", "torchvision"],
    "torch_llm": ["torch"],
    "jax_vision": ["jax", "flax"],
    "onnxruntime": ["onnxruntime", "numpy"],
}


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def user_traceback(e):
    """user_traceback formats e's traceback without the frames of this package (the protocol
    loop, the adapter calling the user's code): what the user reads is their own code. When every
    frame is the package's (an adapter's own bug), all are kept."""
    frames = traceback.extract_tb(e.__traceback__)
    own = [f for f in frames if not os.path.abspath(f.filename).startswith(_PACKAGE_DIR + os.sep)]
    if not own:
        return traceback.format_exc()
    return ("Traceback (most recent call last):\n" + "".join(traceback.format_list(own))
            + "".join(traceback.format_exception_only(type(e), e)))


def _protocol_stream():
    """Move the protocol to a duplicate of fd 1 and send everything else written to fd 1 to
    stderr."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", encoding="utf-8", buffering=1 << 16)


class Server:
    """Server handles requests for one adapter until teardown or end of input."""

    def __init__(self, out, log):
        self.out = out
        self.log = log
        self.adapter = None
        self.adapter_name = None
        self.is_setup = False
        self.bytecode_done = False

    def reply(self, msg):
        self.out.write(json.dumps(msg, separators=(",", ":"), allow_nan=False, default=str))
        self.out.write("\n")
        self.out.flush()

    def serve(self, stdin):
        for line in stdin:
            line = line.strip()
            if not line:
                continue
            try:
                req = json.loads(line)
            except ValueError as e:
                self.reply({"id": None, "ok": False,
                            "error": {"code": "bad_request", "message": "not JSON: %s" % e}})
                continue
            rid = req.get("id") if isinstance(req, dict) else None
            op = req.get("op") if isinstance(req, dict) else None
            handler = getattr(self, "op_" + str(op), None)
            if handler is None:
                self.reply({"id": rid, "ok": False,
                            "error": {"code": "bad_request", "message": "unknown op %r" % op}})
                continue
            try:
                body = handler(req)
            except WorkerError as e:
                self.log.info("%s failed: %s", op, e)
                body = {"ok": False, "error": {"code": e.code, "message": str(e)}}
            except SystemExit as e:  # sys.exit("why") in a benchmark: its message, not "exited"
                why = e.code if isinstance(e.code, str) else "exit status %s" % e.code
                tb = user_traceback(e)
                self.log.error("%s failed:\n%s", op, tb)
                body = {"ok": False, "error": {"code": "failed", "message": "SystemExit: %s" % why,
                                               "traceback": tb[-4000:]}}
            except Exception as e:  # the adapter's own failure: keep the traceback
                tb = user_traceback(e)
                self.log.error("%s failed:\n%s", op, tb)
                body = {"ok": False, "error": {"code": "failed",
                                               "message": "%s: %s" % (type(e).__name__, e),
                                               "traceback": tb[-4000:]}}
            body.setdefault("ok", True)
            body["id"] = rid
            try:
                self.reply(body)
            except ValueError as e:  # NaN or infinity in a figure
                self.reply({"id": rid, "ok": False,
                            "error": {"code": "failed", "message": "reply not encodable: %s" % e}})
            if op == "teardown" and body.get("ok"):
                return 0
        return 0

    def op_hello(self, req):
        name = req.get("adapter") or self.adapter_name
        if not name:
            raise BadParams("hello: no adapter named (pass \"adapter\")")
        if name not in ADAPTERS:
            raise BadParams("unknown adapter %r (one of %s)" % (name, ", ".join(sorted(ADAPTERS))))
        mod = importlib.import_module("." + ADAPTERS[name], __package__)
        self.adapter = mod.ADAPTER(self.log)
        self.adapter_name = name
        versions = {"python": platform.python_version(), "inferbench_worker": __version__}
        versions.update(self.adapter.versions())
        return {"protocol": PROTOCOL, "worker": "inferbench_worker " + __version__,
                "adapter": name, "framework": self.adapter.framework, "versions": versions,
                "device": self.adapter.device(), "pid": os.getpid(),
                "executable": sys.executable}

    def _adapter(self):
        if self.adapter is None:
            raise BadParams("no adapter: send hello first")
        return self.adapter

    def op_setup(self, req):
        a = self._adapter()
        params = req.get("params") or {}
        if not isinstance(params, dict):
            raise BadParams("setup: params must be an object")
        t0 = time.perf_counter_ns()
        res = a.setup(params) or {}
        elapsed = (time.perf_counter_ns() - t0) / 1e6
        self.is_setup = True
        out = {"load_time_ms": res.get("load_time_ms", elapsed), "device": a.device(),
               "info": res.get("info", {}), "values": res.get("values", {})}
        if res.get("compile_time_ms") is not None:
            out["compile_time_ms"] = res["compile_time_ms"]
        if res.get("warnings"):
            out["warnings"] = [str(w) for w in res["warnings"]]
        return out

    def _run(self, req, warmup):
        a = self._adapter()
        if not self.is_setup:
            raise BadParams("run before setup")
        n = req.get("n", 1)
        if not isinstance(n, int) or n < 1:
            raise BadParams("n must be a positive integer, got %r" % (n,))
        if COUNTER is not None:
            if not COUNTER.instrumented and "torch" in sys.modules and os.environ.get(BYTECODE_ENV):
                # The operator pass's dispatch mode, once before instrumentation (operators.py).
                from . import operators

                operators.prepare(lambda: a.run(1, Recorder(), True))
            COUNTER.instrument()
        t0 = time.perf_counter_ns()
        rec = Recorder()
        if COUNTER is not None and not warmup:
            # Instruction mode: one call at a time, each counted into a dump file of its own.
            for _ in range(n):
                COUNTER.count(lambda: a.run(1, rec, warmup))
        else:
            a.run(n, rec, warmup)
        if warmup:
            a.after_warmup()
        out = rec.to_json(a.default_items)
        out["values"] = a.values()
        out["elapsed_ms"] = (time.perf_counter_ns() - t0) / 1e6
        if COUNTER is not None and not warmup:
            from .callgrind import identity

            out["counted"] = n
            out["counted_by"] = identity()
            bc_dir = os.environ.get(BYTECODE_ENV)
            if bc_dir and not self.bytecode_done:
                # One more call, after the counted ones and outside their window: each Python
                # function's bytecode instructions (bytecode.py), for explain.
                from . import bytecode

                self.bytecode_done = True
                out["bytecode"] = bytecode.profile(lambda: a.run(1, Recorder(), False), bc_dir)
                if "torch" in sys.modules:
                    # And a pass of a few calls with each torch operator counted apart
                    # (operators.py): its dump files are read and removed by the worker, and
                    # the reply says how many there were, for the harness's numbering.
                    from . import operators

                    before = COUNTER.dumps
                    try:
                        path = operators.profile(lambda: a.run(1, Recorder(), False), COUNTER, bc_dir)
                    except Exception as e:  # what explain reads, not what was measured
                        self.log.warning("instruction mode: the torch operator pass failed, no "
                                         "operators.json: %s: %s", type(e).__name__, e)
                        path = None
                    out["other_dumps"] = COUNTER.dumps - before
                    if path:
                        out["operators"] = path
        return out

    def op_warmup(self, req):
        return self._run(req, True)

    def op_run(self, req):
        return self._run(req, False)

    def op_profile(self, req):
        from .profiling import profile

        if not self.is_setup:
            raise BadParams("profile before setup")
        n, out_dir = req.get("n", 1), req.get("dir")
        if not isinstance(n, int) or n < 1 or not isinstance(out_dir, str) or not out_dir:
            raise BadParams("profile: want n (a positive integer) and dir")
        return {"files": profile(self._adapter(), self.adapter_name, n, out_dir)}

    def op_teardown(self, req):
        if self.adapter is not None:
            self.adapter.teardown()
        return {}


def _watch_parent(log, period=0.5):
    """Exit when the harness that started this worker is gone (it was killed while a long batch
    ran here): a daemon thread notices the change of parent process."""
    import threading

    parent = os.getppid()
    if parent <= 1:
        return

    def watch():
        while True:
            time.sleep(period)
            if os.getppid() != parent:
                log.warning("harness (pid %d) is gone: exiting", parent)
                os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main(argv):
    if len(argv) >= 2 and argv[0] == "--list":
        from . import discover

        json.dump(discover.discover_file(argv[1]), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    global STREAM
    out = STREAM = _protocol_stream()
    level = os.environ.get("INFERBENCH_WORKER_LOG", "INFO").upper()
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, level, logging.INFO),
                        format="worker %(asctime)s %(levelname)s %(message)s")
    log = logging.getLogger("inferbench_worker")
    global COUNTER
    if os.environ.get("INFERBENCH_WORKER_COUNT"):
        from .callgrind import Counter

        COUNTER = Counter()  # Unsupported ends the worker, with the reason on stderr
    else:
        # The watcher thread wakes every half second: in instruction mode its wake-ups would
        # fall into the counts, so it runs only when timing.
        _watch_parent(log)
    srv = Server(out, log)
    if len(argv) >= 2 and argv[0] == "--adapter":
        srv.adapter_name = argv[1]
    try:
        return srv.serve(sys.stdin)
    except KeyboardInterrupt:
        return 130
