"""pyfunc: seed-style Python benchmarks, run as they are.

Params:
  file      the .py file (relative to the definition's directory)
  function  a run_* / benchmark_* function: each iteration is one call
  class     or a class with setup_model / measure_latency / measure_time_to_first_token /
            cleanup_model: setup_model(config) at setup, one measure_latency(config) per
            iteration, cleanup_model() at teardown
  ttft      for a class with measure_time_to_first_token: also call it every iteration
            (default true)
  min_iteration_ms
            a function call shorter than BATCH_BELOW_MS (0.1 ms) in the warm-up is timed in
            batches of calls lasting at least this long (default 1; 0: one call per iteration)
  other params are passed to the function by parameter name, and are attributes of `config`

A function may take `logger` (a logging.Logger writing to the worker's log), `config` (the
params as attributes; unknown attributes read as None) or any param by name.

Each iteration is timed around the call, with the process's CPU clock beside the monotonic one
(cpu_ms). A call shorter than BATCH_BELOW_MS is too short for the timers and the harness's own
cost around them: the warm-up iterations grow the calls of an iteration (at most 100 times the
calls of the one before, as `go test` grows b.N) until one lasts min_iteration_ms, and every
measured iteration makes that many, reporting the time per call (latency_ms and cpu_ms), the
calls' items, and the figures the last call returned. What the call returns is kept as per-iteration values:
a number as "result"; a dict's numbers under their keys (nested dicts joined with "_"); an object
or dict with `latency` (seconds, the seed convention) as reported_latency_ms, `latency_ms` as is,
`tokens_per_second` as tokens_per_s. measure_time_to_first_token's return (seconds) is ttft_ms.
Anything the code prints goes to the worker's log, never to the protocol.
"""

import importlib.util
import inspect
import logging
import os
import sys
import time

from .common import Adapter, BadParams, Unavailable, get


class Config:
    """Config exposes params as attributes; unknown attributes are None, like an optional field."""

    def __init__(self, params):
        defaults = {"variant": "eager", "batch_size": 1, "compile_mode": None,
                    "warmup_iterations": 0, "measurement_iterations": 1, "device": "auto"}
        defaults.update(params)
        self.__dict__.update(defaults)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return None

    def get(self, key, default=None):
        return self.__dict__.get(key, default)


class PyFunc(Adapter):
    name = "pyfunc"
    framework = "python"

    def setup(self, params):
        self.params = params
        path = get(params, "file", None, str)
        if not path:
            raise BadParams("param file: the .py file is required")
        if not os.path.isfile(path):
            raise BadParams("param file: %s: no such file (relative to %s)" % (path, os.getcwd()))
        fname, cname = params.get("function"), params.get("class")
        if bool(fname) == bool(cname):
            raise BadParams("give exactly one of params function and class")
        # Throughput counts items: batch_size per call unless the function returns {"items": n}.
        self.default_items = max(get(params, "batch_size", 1, int), 1)
        t0 = time.perf_counter_ns()
        with missing_module(path):
            mod = load_file(path)
        self.config = Config({k: v for k, v in params.items()
                              if k not in ("file", "function", "class", "ttft", "min_iteration_ms")})
        self.batch = 1
        self.min_iteration_ns = int(get(params, "min_iteration_ms", 1, float) * 1e6)
        self.logger = logging.getLogger("bench." + (fname or cname))
        self.obj = None
        if fname:
            fn = getattr(mod, fname, None)
            if not callable(fn):
                raise BadParams("%s has no function %s" % (path, fname))
            kwargs = bind(fn, self.config, self.logger)
            self.call = lambda: fn(**kwargs)
            info = {"file": path, "function": fname}
        else:
            cls = getattr(mod, cname, None)
            if not inspect.isclass(cls):
                raise BadParams("%s has no class %s" % (path, cname))
            with missing_module(path):
                self.obj = cls(**bind(cls, self.config, self.logger))
                self.obj.setup_model(self.config)
            lat = getattr(self.obj, "measure_latency", None)
            self.ttft = getattr(self.obj, "measure_time_to_first_token", None)
            if not get(params, "ttft", True, bool):
                self.ttft = None
            cfg = self.config
            self.call = (lambda: lat(cfg)) if lat else (lambda: self.ttft(cfg))
            if not lat:
                self.ttft = None
            info = {"file": path, "class": cname}
        load_ms = (time.perf_counter_ns() - t0) / 1e6
        return {"load_time_ms": load_ms, "info": info}

    def run(self, n, rec, warmup):
        pc = time.perf_counter_ns
        ct = time.process_time_ns
        call = self.call
        batched = self.obj is None or self.ttft is None  # a TTFT is measured per call
        for _ in range(n):
            k = self.batch if batched else 1
            c0 = ct()
            t0 = pc()
            with missing_module(self.params.get("file")):
                for _ in range(k):
                    r = call()
            t1 = pc()
            c1 = ct()
            if warmup and batched:
                self.batch = batch_for(t1 - t0, k, self.min_iteration_ns)
            vals = flatten(r)
            items = vals.pop("items", None)
            if isinstance(items, dict):
                items = items["value"]
            if items is not None and items >= 0:
                items = int(items) * k
            elif k > 1:
                items = k * self.default_items
            else:
                items = None
            if self.obj is not None and self.ttft is not None:
                t = self.ttft(self.config)
                if isinstance(t, (int, float)) and not isinstance(t, bool):
                    vals["ttft_ms"] = t * 1e3
            rec.add((t1 - t0) / 1e6 / k, values=vals, items=items, cpu_ms=(c1 - c0) / 1e6 / k)

    def teardown(self):
        if self.obj is not None and hasattr(self.obj, "cleanup_model"):
            self.obj.cleanup_model()
            self.obj = None


# A call shorter than this in the warm-up is timed in batches (min_iteration_ms).
BATCH_BELOW_MS = 0.1

# The most calls one iteration makes.
MAX_BATCH = 10_000_000


def batch_for(took_ns, k, target_ns):
    """batch_for returns how many calls an iteration makes next, given that k calls took
    took_ns: as many as last target_ns, at most 100 times k (one mistimed warm-up cannot make an
    iteration last minutes); 1 for calls of BATCH_BELOW_MS and more, or when target_ns is 0."""
    if target_ns <= 0:
        return 1
    per = took_ns / k
    if k == 1 and per >= BATCH_BELOW_MS * 1e6:
        return 1
    if per <= 0:
        return min(100 * k, MAX_BATCH)
    want = -(-target_ns // max(int(per), 1))
    return max(1, min(int(want), 100 * k, MAX_BATCH))


class missing_module:
    """missing_module turns a module the benchmark imports and this interpreter lacks into
    Unavailable naming it: the scenario is skipped with the reason, like any other unmet
    requirement, instead of failing with the worker's own traceback."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, typ, e, tb):
        if typ is None or not issubclass(typ, ModuleNotFoundError):
            return False
        name = getattr(e, "name", None) or str(e)
        raise Unavailable("%s imports python module %r, not installed for %s (install it, or run "
                          "with the interpreter that has it: INFERBENCH_PYTHON or subject.python)"
                          % (self.path, name, sys.executable)) from None


def load_file(path):
    """load_file imports a .py file as a module, with its folder first on sys.path."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = "inferbench_bench_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def bind(fn, config, logger):
    """bind builds keyword arguments for fn from logger, config and params by name."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return {}
    kwargs = {}
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name == "self":
            continue
        if p.name == "logger":
            kwargs["logger"] = logger
        elif p.name == "config":
            kwargs["config"] = config
        elif p.name in config.__dict__:
            kwargs[p.name] = config.__dict__[p.name]
        elif p.default is p.empty:
            raise BadParams("%s needs argument %r: pass it with --set %s=VALUE, or give it a "
                            "default in the function" % (getattr(fn, "__name__", fn), p.name, p.name))
    return kwargs


def _declared(v):
    """_declared reports whether v is a figure with its declaration: {"value": number, ...}."""
    return (isinstance(v, dict) and isinstance(v.get("value"), (int, float))
            and not isinstance(v.get("value"), bool) and set(v) <= {"value", "unit", "better"})


def flatten(r, prefix=""):
    """flatten turns a return value into {name: number}, or {name: {"value": number, "unit": ...,
    "better": ...}} for a figure returned with its declaration."""
    out = {}
    if r is None:
        return out
    if isinstance(r, bool):
        return out
    if isinstance(r, (int, float)):
        out[prefix or "result"] = float(r)
        return out
    if not isinstance(r, dict):
        d = {}
        for k in ("latency", "latency_ms", "tokens_per_second", "ttft", "throughput"):
            if hasattr(r, k):
                d[k] = getattr(r, k)
        r = d
    for k, v in r.items():
        key = (prefix + "_" + str(k)) if prefix else str(k)
        if not prefix and k == "latency" and isinstance(v, (int, float)):
            out["reported_latency_ms"] = float(v) * 1e3
        elif not prefix and k == "tokens_per_second" and isinstance(v, (int, float)):
            out["tokens_per_s"] = float(v)
        elif _declared(v):
            # {"value": 1000, "unit": "items/s", "better": "higher"}: a figure with its
            # declaration, kept whole for the Recorder (docs/metrics.md, "Directions").
            out[key] = {f: (float(v[f]) if f == "value" else str(v[f]))
                        for f in ("value", "unit", "better") if v.get(f) is not None}
        elif isinstance(v, dict):
            out.update(flatten(v, key))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[key] = float(v)
    return out


ADAPTER = PyFunc
