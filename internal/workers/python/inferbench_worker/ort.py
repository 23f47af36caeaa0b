"""onnxruntime: any .onnx model on the execution providers onnxruntime has here.

Params:
  model       path to the .onnx file (relative to the definition's directory)
  providers   list or comma-separated names (default: all available but the remote-only
              AzureExecutionProvider, in onnxruntime's order, e.g. CUDAExecutionProvider before
              CPUExecutionProvider)
  batch_size  value for dynamic leading dimensions (default 1)
  shapes      optional {input name: [dims]} for other dynamic dimensions (default 1 each)
  threads     intra-op threads (default onnxruntime's choice)
  seed        random seed for the synthetic inputs

Inputs are random tensors of each input's element type. Setup reports load_time_ms (session
creation, which includes graph optimisation) and the first call's duration.
"""

import os
import time

from .common import Adapter, BadParams, Unsupported, get, peak_rss_mb, require

TYPES = {
    "tensor(float)": "float32", "tensor(float16)": "float16", "tensor(double)": "float64",
    "tensor(int64)": "int64", "tensor(int32)": "int32", "tensor(int8)": "int8",
    "tensor(uint8)": "uint8", "tensor(bool)": "bool",
}


class OnnxRuntime(Adapter):
    name = "onnxruntime"
    framework = "onnxruntime"

    def __init__(self, log):
        super().__init__(log)
        self.ort = require("onnxruntime", self.name)
        self.np = require("numpy", self.name)
        self.providers = []

    def versions(self):
        return {"onnxruntime": self.ort.__version__, "numpy": self.np.__version__}

    def device(self):
        p = self.providers or self.ort.get_available_providers()
        return "cuda" if p and p[0] in ("CUDAExecutionProvider", "TensorrtExecutionProvider") \
            else "cpu"

    def setup(self, params):
        ort, np = self.ort, self.np
        self.params = params
        path = get(params, "model", None, str)
        if not path:
            raise BadParams("param model: path to an .onnx file is required")
        if not os.path.isfile(path):
            raise BadParams("param model: %s: no such file (relative paths resolve against %s)"
                            % (path, os.getcwd()))
        avail = ort.get_available_providers()
        want = params.get("providers")
        if isinstance(want, str):
            want = [p.strip() for p in want.split(",") if p.strip()]
        # AzureExecutionProvider (in PyPI's onnxruntime) calls remote endpoints and runs nothing
        # here; listed first, it cost 22% at resnet18 batch 1 on CPU (scripts/agreement.py)
        want = want or [p for p in avail if p != "AzureExecutionProvider"] or avail
        missing = [p for p in want if p not in avail]
        if missing:
            raise Unsupported("providers %s not available (have %s)"
                              % (", ".join(missing), ", ".join(avail)))
        opts = ort.SessionOptions()
        threads = get(params, "threads", 0, int)
        if threads:
            opts.intra_op_num_threads = threads
        batch = get(params, "batch_size", 1, int)
        shapes = params.get("shapes") or {}
        t0 = time.perf_counter_ns()
        sess = ort.InferenceSession(path, sess_options=opts, providers=want)
        load_ms = (time.perf_counter_ns() - t0) / 1e6
        self.providers = sess.get_providers()
        rng = np.random.default_rng(get(params, "seed", 0, int))
        feeds = {}
        for inp in sess.get_inputs():
            dims = shapes.get(inp.name)
            if dims is None:
                dims = [d if isinstance(d, int) and d > 0 else (batch if i == 0 else 1)
                        for i, d in enumerate(inp.shape)]
            dt = TYPES.get(inp.type)
            if dt is None:
                raise Unsupported("input %s has type %s, which this adapter cannot synthesise"
                                  % (inp.name, inp.type))
            if dt.startswith("float"):
                feeds[inp.name] = rng.standard_normal(dims).astype(dt)
            elif dt == "bool":
                feeds[inp.name] = rng.integers(0, 2, dims).astype(bool)
            else:
                feeds[inp.name] = rng.integers(0, 100, dims).astype(dt)
        self.sess, self.feeds = sess, feeds
        self.default_items = batch
        t0 = time.perf_counter_ns()
        outs = sess.run(None, feeds)
        first = (time.perf_counter_ns() - t0) / 1e6
        info = {"model": os.path.basename(path), "providers": ",".join(self.providers),
                "batch_size": str(batch),
                "inputs": ";".join("%s%s" % (k, list(v.shape)) for k, v in feeds.items()),
                "output_shape": ";".join(str(list(o.shape)) for o in outs)}
        return {"load_time_ms": load_ms, "info": info, "values": {"first_call_ms": first}}

    def iteration(self):
        self.sess.run(None, self.feeds)

    def values(self):
        return {"memory_mb": peak_rss_mb()}


ADAPTER = OnnxRuntime
