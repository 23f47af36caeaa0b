"""Pieces shared by the adapters: structured errors, the Adapter base class (and TorchAdapter for
the torch adapters), the Recorder that collects one batch of samples, and helpers for memory,
devices and dtypes.

Standard library only; torch helpers import torch inside the function.
"""

import os
import resource
import sys
import time


class WorkerError(Exception):
    """WorkerError is an error with a protocol code (see docs/worker-protocol.md)."""

    code = "failed"


class BadParams(WorkerError):
    """BadParams: a parameter is missing, unknown or has a wrong value."""

    code = "bad_params"


class Unavailable(WorkerError):
    """Unavailable: the adapter's framework is not installed. The harness skips the scenario."""

    code = "unavailable"


class Unsupported(WorkerError):
    """Unsupported: this combination (a variant, a device, a dtype) cannot run here. Skipped."""

    code = "unsupported"


def require(module, adapter):
    """require imports module by name or raises Unavailable naming the adapter and interpreter."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise Unavailable(
            "adapter %s needs python module %r, not installed for %s (%s)"
            % (adapter, module, sys.executable, e)
        ) from None


class Recorder:
    """Recorder collects the samples of one warmup or run request, column by column."""

    def __init__(self):
        self.latency_ms = []
        self.cpu_ms = []  # the process's CPU time of each iteration (time.process_time_ns)
        self.items = []
        self.ttft_ms = []
        self.token_ms = []
        self.token_counts = []
        self.input_tokens = []
        self.output_tokens = []
        self.iter_values = {}
        self.metrics = {}  # declared units and directions: {name: {"unit": ..., "better": ...}}

    def add(self, latency_ms, items=None, ttft_ms=None, token_ms=None, token_count=None,
            input_tokens=None, output_tokens=None, values=None, cpu_ms=None):
        """add records one iteration. token_ms are offsets from the iteration start."""
        i = len(self.latency_ms)
        self.latency_ms.append(latency_ms)
        if cpu_ms is not None:
            _pad(self.cpu_ms, i, None).append(cpu_ms)
        if items is not None:
            _pad(self.items, i, 0).append(items)
        if ttft_ms is not None:
            _pad(self.ttft_ms, i, None).append(ttft_ms)
        if token_ms is not None:
            _pad(self.token_ms, i, []).append(token_ms)
        if token_count is not None:
            _pad(self.token_counts, i, 1).append(token_count)
        if input_tokens is not None:
            _pad(self.input_tokens, i, 0).append(input_tokens)
        if output_tokens is not None:
            _pad(self.output_tokens, i, 0).append(output_tokens)
        if values:
            for k, v in values.items():
                if isinstance(v, dict) and "value" in v:
                    # {"value": 1000, "unit": "items/s", "better": "higher"}: a figure with its
                    # declaration (docs/metrics.md, "Directions").
                    decl = {f: str(v[f]) for f in ("unit", "better") if v.get(f) is not None}
                    if decl:
                        self.metrics[k] = decl
                    v = v["value"]
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    continue
                _pad(self.iter_values.setdefault(k, []), i, None).append(float(v))

    def to_json(self, default_items=1):
        """to_json returns the columnar reply body; constant columns are sent as one number."""
        n = len(self.latency_ms)
        out = {"n": n, "latency_ms": self.latency_ms}
        if self.cpu_ms:
            out["cpu_ms"] = _pad(self.cpu_ms, n, None)
        out["items"] = _column(self.items, n, default_items)
        for key, col, fill in (("ttft_ms", self.ttft_ms, None), ("token_ms", self.token_ms, []),
                               ("token_count", self.token_counts, 1),
                               ("input_tokens", self.input_tokens, 0),
                               ("output_tokens", self.output_tokens, 0)):
            if col:
                out[key] = _column(col, n, fill)
        if self.iter_values:
            out["iter_values"] = {k: _pad(v, n, None) for k, v in self.iter_values.items()}
        if self.metrics:
            out["metrics"] = self.metrics
        return out


def _pad(col, n, fill):
    if len(col) < n:
        col.extend([fill] * (n - len(col)))
    return col


def _column(col, n, fill):
    if not col:
        return fill
    _pad(col, n, fill)
    first = col[0]
    if not isinstance(first, list) and all(v == first for v in col):
        return first
    return col


class Adapter:
    """Adapter is one way to build and run a model. Subclasses override setup and iteration, or
    run when they time iterations themselves (CUDA events, generation)."""

    name = "adapter"
    framework = "none"

    def __init__(self, log):
        self.log = log
        self.params = {}
        self.default_items = 1

    def versions(self):
        """versions returns framework versions for the hello reply."""
        return {}

    def device(self):
        """device returns the device the adapter would use (hello) or uses (after setup)."""
        return "cpu"

    def setup(self, params):
        """setup builds the model. It returns a dict with optional load_time_ms, compile_time_ms,
        info (strings) and values (numbers)."""
        self.params = params
        return {}

    def iteration(self):
        """iteration performs one call. It may return a dict of numbers (per-iteration values)."""
        return None

    def run(self, n, rec, warmup):
        """run performs n iterations, timing each with the process's monotonic clock, and its
        CPU clock (every thread of the process: a framework's intra-op threads count)."""
        it = self.iteration
        pc = time.perf_counter_ns
        ct = time.process_time_ns
        # On an accelerator the CPU time is the launches and the wait's spin, not the work.
        on_cpu = str(self.device()) == "cpu"
        lat, cpu = rec.latency_ms, rec.cpu_ms
        for _ in range(n):
            c0 = ct()
            t0 = pc()
            r = it()
            t1 = pc()
            c1 = ct()
            if r is None:
                lat.append((t1 - t0) / 1e6)
                if on_cpu:
                    cpu.append((c1 - c0) / 1e6)
            else:
                rec.add((t1 - t0) / 1e6, values=r if isinstance(r, dict) else None,
                        cpu_ms=(c1 - c0) / 1e6 if on_cpu else None)

    def after_warmup(self):
        """after_warmup resets peak counters so that run reports steady-state peaks."""

    def values(self):
        """values returns batch-level figures (peak memory, ...) sent with every run reply."""
        return {"memory_mb": peak_rss_mb()}

    def teardown(self):
        """teardown releases the model."""


def peak_rss_mb():
    """peak_rss_mb is this process's own peak resident set size in MiB.

    On Linux it is the kernel's high-water mark of this process's memory (VmHWM in
    /proc/self/status), which starts anew at exec. getrusage's ru_maxrss does not: Linux carries it
    across exec from the process that became this one, so a worker started by a 200 MB parent read
    203 MB with a VmHWM of 8.9 MB: inferbench's own memory, not the subject's. Elsewhere (macOS,
    where a new process starts its own count) ru_maxrss it is.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / 1024.0 if sys.platform != "darwin" else r / (1024.0 * 1024.0)


def rss_mb():
    """rss_mb is this process's current resident set size in MiB (Linux), else the peak."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / (1024.0 * 1024.0)
    except (OSError, ValueError, IndexError):
        return peak_rss_mb()


def get(params, key, default=None, kind=None, choices=None):
    """get reads a parameter, converting it to kind and checking it against choices."""
    v = params.get(key, default)
    if v is None:
        return None
    if kind is not None:
        try:
            if kind is bool and isinstance(v, str):
                v = v.lower() in ("1", "true", "yes", "on")
            else:
                v = kind(v)
        except (TypeError, ValueError):
            raise BadParams("param %s: %r is not a %s" % (key, v, kind.__name__)) from None
    if choices is not None and v not in choices:
        raise BadParams("param %s: %r is not one of %s" % (key, v, ", ".join(map(str, choices))))
    return v


def set_threads(params):
    """set_threads applies the `threads` param to torch (intra-op threads)."""
    n = get(params, "threads", 0, int)
    if n and n > 0:
        import torch

        torch.set_num_threads(n)


def torch_device(want):
    """torch_device resolves "auto" to cuda > mps > cpu, and checks a forced device exists."""
    import torch

    want = (want or "auto").lower()
    has_mps = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    if want == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if has_mps:
            return torch.device("mps")
        return torch.device("cpu")
    dev = torch.device(want)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise Unsupported("device %s requested but torch.cuda.is_available() is false" % want)
    if dev.type == "mps" and not has_mps:
        raise Unsupported("device %s requested but MPS is not available" % want)
    return dev


def torch_dtype(name):
    """torch_dtype maps float32/float16/bfloat16 (and fp32/fp16/bf16) to a torch dtype."""
    import torch

    table = {"float32": torch.float32, "fp32": torch.float32, "float16": torch.float16,
             "fp16": torch.float16, "half": torch.float16, "bfloat16": torch.bfloat16,
             "bf16": torch.bfloat16}
    key = (name or "float32").lower()
    if key not in table:
        raise BadParams("param dtype: %r is not one of float32, float16, bfloat16" % name)
    return table[key]


def torch_versions():
    """torch_versions reports torch (and torchvision, transformers when importable) versions."""
    out = {}
    import torch

    out["torch"] = torch.__version__
    if torch.version.cuda:
        out["cuda"] = torch.version.cuda
    if torch.cuda.is_available():
        out["gpu"] = torch.cuda.get_device_name(0)
    for mod in ("torchvision", "transformers"):
        if mod in sys.modules:
            out[mod] = getattr(sys.modules[mod], "__version__", "?")
    return out


def compile_module(fn, params, adapter):
    """compile_module applies torch.compile with the `compile_mode` param, or raises Unsupported
    when the installed torch has no torch.compile."""
    import torch

    if not hasattr(torch, "compile"):
        raise Unsupported("variant compiled needs torch.compile (torch >= 2.0); %s has torch %s"
                          % (sys.executable, torch.__version__))
    mode = get(params, "compile_mode", "default", str)
    kwargs = {}
    if mode and mode != "default":
        kwargs["mode"] = mode
    backend = get(params, "compile_backend", None, str)
    if backend:
        kwargs["backend"] = backend
    return torch.compile(fn, **kwargs)


class StepMarked:
    """StepMarked wraps a compiled model step for generation loops: before each invocation it
    calls torch.compiler.cudagraph_mark_step_begin() (with mode reduce-overhead on CUDA each call
    replays a CUDA graph whose outputs live in memory the next replay overwrites), and it clones
    the step's logits outside the compiled region, so that nothing a caller keeps across steps
    (transformers' generate keeps outputs of earlier steps) points into a graph's memory.
    Without this, transformers 5.x + torch 2.11 on an H100 failed in setup with "accessing
    tensor output of CUDAGraphs that has been overwritten by a subsequent run". On CPU there are
    no CUDA graphs and the wrapper costs one clone of the logits per step. `calls` counts the
    marked invocations."""

    def __init__(self, torch, fn):
        self.fn = fn
        self.__wrapped__ = fn  # inspect.signature (transformers reads forward's) sees fn's
        compiler = getattr(torch, "compiler", None)
        self.mark = getattr(compiler, "cudagraph_mark_step_begin", None)
        self.calls = 0

    def __call__(self, *args, **kwargs):
        if self.mark is not None:
            self.mark()
        self.calls += 1
        out = self.fn(*args, **kwargs)
        if hasattr(out, "clone"):
            return out.clone()
        logits = getattr(out, "logits", None)
        if logits is not None:
            out["logits"] = logits.clone()
        return out


class DecodeCompiled:
    """DecodeCompiled is a generation model's forward with the prefill run eagerly and each
    decode step (one new position per sequence) through the compiled forward, marked
    (StepMarked), as transformers' own generate does with a static cache. transformers 5.x
    allocates a static cache's tensors lazily, in the first forward that updates them: when that
    forward was compiled with mode reduce-overhead on CUDA, the cache was created inside a CUDA
    graph, so it lived in memory the next replay overwrote, and setup failed ("accessing tensor
    output of CUDAGraphs that has been overwritten by a subsequent run", seen on an H100 with
    torch 2.11 and transformers 5.17 although every step was marked). Prefilled eagerly, the
    cache is ordinary memory that transformers marks as a static address for the compiled steps.
    `prefills` counts the eager calls, `calls` the compiled ones."""

    def __init__(self, torch, eager, compiled):
        self.eager = eager
        self.step = StepMarked(torch, compiled)
        self.__wrapped__ = eager  # inspect.signature (transformers reads forward's) sees eager's
        self.prefills = 0

    @property
    def calls(self):
        return self.step.calls

    def __call__(self, *args, **kwargs):
        x = kwargs.get("input_ids")
        if x is None:
            x = kwargs.get("inputs_embeds")
        if x is None and args:
            x = args[0]
        shape = getattr(x, "shape", None)
        if shape is not None and len(shape) > 1 and shape[1] > 1:
            self.prefills += 1
            return self.eager(*args, **kwargs)
        return self.step(*args, **kwargs)


class TorchAdapter(Adapter):
    """TorchAdapter is the base of the torch adapters: it imports torch, reports the device it
    resolved in setup (self.dev), and resets, reports and frees CUDA memory around the run.
    Subclasses drop their model references in teardown before calling super().teardown()."""

    framework = "pytorch"

    def __init__(self, log):
        super().__init__(log)
        self.torch = require("torch", self.name)
        self.dev = None

    def versions(self):
        return torch_versions()

    def device(self):
        return str(self.dev) if self.dev is not None else str(torch_device("auto"))

    def _cuda(self):
        return self.dev is not None and self.dev.type == "cuda"

    def after_warmup(self):
        if self._cuda():
            self.torch.cuda.reset_peak_memory_stats(self.dev)

    def values(self):
        out = {"memory_mb": peak_rss_mb()}
        if self._cuda():
            out["gpu_memory_mb"] = self.torch.cuda.max_memory_allocated(self.dev) / 2**20
        return out

    def teardown(self):
        if self._cuda():
            self.torch.cuda.empty_cache()


class TorchSync:
    """TorchSync times one call on a torch device: CUDA events on GPU, the monotonic clock with a
    device synchronisation on MPS, the plain clock on CPU."""

    def __init__(self, device):
        import torch

        self.torch = torch
        self.cuda = device.type == "cuda"
        self.mps = device.type == "mps"
        if self.cuda:
            self.start = torch.cuda.Event(enable_timing=True)
            self.end = torch.cuda.Event(enable_timing=True)

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()
        elif self.mps:
            self.torch.mps.synchronize()

    def time(self, fn):
        """time runs fn once and returns its duration in milliseconds."""
        if self.cuda:
            self.start.record()
            fn()
            self.end.record()
            self.end.synchronize()
            return self.start.elapsed_time(self.end)
        t0 = time.perf_counter_ns()
        fn()
        if self.mps:
            self.torch.mps.synchronize()
        return (time.perf_counter_ns() - t0) / 1e6
