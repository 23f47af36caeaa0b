"""Real inference through each framework adapter, on CPU, in real worker processes.

Run with the project's venv (make venv; make test-python): torch 2.x with torch.compile, JAX with
Flax, ONNX Runtime (on a model this test exports with torch.onnx), transformers. Each test asserts
measured latencies > 0 and outputs of the right shape. A framework that this interpreter cannot
import is skipped with the reason (Debian's python3 has only torch 1.13), or fails the test when
INFERBENCH_REQUIRE names frameworks (as `make test-python` does when .venv exists, and CI).
"""

import importlib.util
import json
import os
import pstats
import sys
import tempfile
import unittest

from test_worker import REQUIRE, Worker, need

HAVE = {m: importlib.util.find_spec(m) is not None
        for m in ("torch", "torchvision", "jax", "flax", "onnxruntime", "onnx", "transformers",
                  "kernels", "huggingface_hub")}


def torch_compiles():
    if not HAVE["torch"]:
        return False
    import torch

    return hasattr(torch, "compile") and int(torch.__version__.split(".")[0]) >= 2


def why(*mods):
    missing = [m for m in mods if not HAVE[m]]
    return "%s not importable by %s" % (", ".join(missing), sys.executable)


def check_run(t, w, n, items):
    """check_run runs n iterations and checks the samples: n of them, each > 0."""
    r = w.call("run", n=n)
    t.assertEqual(r["n"], n)
    t.assertEqual(len(r["latency_ms"]), n)
    t.assertTrue(all(x > 0 for x in r["latency_ms"]), r["latency_ms"])
    t.assertEqual(r["items"], items)
    return r


@need(HAVE["torch"] and HAVE["torchvision"] and torch_compiles(),
                     why("torch", "torchvision") + " (or torch < 2: no torch.compile)")
class TorchVisionFrameworkTest(unittest.TestCase):
    def test_models_eager_and_compiled(self):
        w = Worker("torch_vision")
        self.addCleanup(w.close)
        for model in ("resnet18", "vit_ti_16"):
            for variant in ("eager", "compiled"):
                with self.subTest(model=model, variant=variant):
                    s = w.call("setup", params={"model": model, "variant": variant,
                                                "image_size": 32, "batch_size": 2,
                                                "device": "cpu", "threads": 1})
                    self.assertEqual(s["info"]["output_shape"], "[2, 1000]")
                    if variant == "compiled":
                        self.assertGreater(s["compile_time_ms"], 0)
                    else:
                        self.assertIsNone(s.get("compile_time_ms"))
                    check_run(self, w, 3, 2)


@need(HAVE["jax"] and HAVE["flax"], why("jax", "flax"))
class JaxFrameworkTest(unittest.TestCase):
    def test_resnet18_jit(self):
        w = Worker("jax_vision")
        self.addCleanup(w.close)
        self.assertEqual(w.hello["framework"], "jax")
        self.assertIn("flax", w.hello["versions"])
        s = w.call("setup", params={"model": "resnet18", "image_size": 32, "batch_size": 2,
                                    "device": "cpu"})
        self.assertEqual(s["info"]["output_shape"], "[2, 1000]")
        self.assertTrue(s["info"]["device"].startswith("cpu"), s["info"])
        self.assertGreater(s["values"]["compilation_time_ms"], 0)
        self.assertGreater(int(s["info"]["parameters"]), 11_000_000)  # ResNet-18: 11.7M
        check_run(self, w, 3, 2)


@need(HAVE["onnxruntime"] and HAVE["torch"] and HAVE["torchvision"]
                     and HAVE["onnx"] and torch_compiles(),
                     why("onnxruntime", "onnx", "torch", "torchvision"))
class OnnxRuntimeFrameworkTest(unittest.TestCase):
    def test_exported_resnet18(self):
        d = export_resnet18(self)
        w = Worker("onnxruntime", cwd=d)
        self.addCleanup(w.close)
        s = w.call("setup", params={"model": "resnet18.onnx", "batch_size": 4, "threads": 1})
        self.assertEqual(s["info"]["inputs"], "x[4, 3, 32, 32]")
        self.assertEqual(s["info"]["output_shape"], "[4, 1000]")
        self.assertIn("CPUExecutionProvider", s["info"]["providers"])
        # the remote-only Azure provider is not a default: it cost 22% per call on CPU
        self.assertNotIn("AzureExecutionProvider", s["info"]["providers"])
        check_run(self, w, 3, 4)


def export_resnet18(t):
    """export_resnet18 exports a random-weight ResNet-18 (32x32 input, dynamic batch) with
    torch.onnx to resnet18.onnx in a new folder, removed when t ends, and returns the folder."""
    import torch
    import torchvision

    d = tempfile.mkdtemp()
    path = os.path.join(d, "resnet18.onnx")
    t.addCleanup(lambda: [os.remove(os.path.join(d, f)) for f in os.listdir(d)])
    model = torchvision.models.resnet18(weights=None).eval()
    batch = torch.export.Dim("batch", min=1, max=64)
    torch.onnx.export(model, (torch.randn(1, 3, 32, 32),), path, input_names=["x"],
                      output_names=["logits"], dynamic_shapes={"x": {0: batch}}, verbose=False)
    return d


@need(HAVE["torch"] and HAVE["transformers"] and torch_compiles(),
                     why("torch", "transformers"))
class TransformersLLMTest(unittest.TestCase):
    base = {"backend": "transformers", "prompt_tokens": 8, "max_new_tokens": 4, "batch_size": 2,
            "device": "cpu", "threads": 1}

    def check_generation(self, w):
        r = check_run(self, w, 2, 2)
        self.assertEqual(r["output_tokens"], 8)  # batch 2 x 4 new tokens, always generated in full
        self.assertEqual(r["input_tokens"], 16)
        for toks in r["token_ms"]:
            self.assertEqual(len(toks), 4)
            self.assertEqual(toks, sorted(toks))
            self.assertGreater(toks[0], 0)

    def test_eager_and_compiled(self):
        w = Worker("torch_llm")
        self.addCleanup(w.close)
        self.assertIn("transformers", w.hello["versions"])
        for variant in ("eager", "compiled"):
            with self.subTest(variant=variant):
                s = w.call("setup", params=dict(self.base, variant=variant))
                self.assertEqual(s["info"]["backend"], "transformers")
                if variant == "compiled":
                    # setup generated twice (first call, steady call): each prefill ran
                    # eagerly, each of the 3 decode steps compiled through StepMarked
                    # (cudagraph_mark_step_begin on CUDA): DecodeCompiled
                    self.assertEqual(s["info"]["eager_prefills"], "2")
                    self.assertEqual(s["info"]["marked_steps"], "6")
                    self.assertGreater(s["compile_time_ms"], 0)
                self.check_generation(w)

    def test_torch_backend_compiled(self):
        w = Worker("torch_llm")
        self.addCleanup(w.close)
        s = w.call("setup", params=dict(self.base, backend="torch", variant="compiled"))
        self.assertEqual(s["info"]["marked_steps"], "8")
        self.check_generation(w)

    @need(HAVE["huggingface_hub"], why("huggingface_hub"))
    def test_local_weights(self):
        """model_id loads a model this test saved: from its directory, then by id from a local
        Hugging Face cache laid out as the hub client lays it out; nothing is downloaded."""
        import torch
        from transformers import AutoModelForCausalLM, LlamaConfig

        d = tempfile.mkdtemp()
        torch.manual_seed(1)
        cfg = LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=64,
                          num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)
        saved = os.path.join(d, "tiny-llama")
        AutoModelForCausalLM.from_config(cfg).save_pretrained(saved)
        snap = os.path.join(d, "hub", "models--inferbench--tiny-llama", "snapshots", "0" * 40)
        os.makedirs(os.path.dirname(snap))
        os.symlink(saved, snap)
        os.makedirs(os.path.join(d, "hub", "models--inferbench--tiny-llama", "refs"))
        with open(os.path.join(d, "hub", "models--inferbench--tiny-llama", "refs", "main"), "w") as f:
            f.write("0" * 40)
        env = {"HF_HUB_CACHE": os.path.join(d, "hub"), "HF_HUB_OFFLINE": "1"}
        w = Worker("torch_llm", env=env)
        self.addCleanup(w.close)
        for model_id, where in ((saved, saved), ("inferbench/tiny-llama", snap)):
            with self.subTest(model_id=model_id):
                s = w.call("setup", params=dict(self.base, model_id=model_id))
                self.assertEqual(s["info"]["vocab_size"], "96")
                self.assertEqual(s["info"]["hidden_size"], "32")
                self.assertEqual(os.path.realpath(s["info"]["weights"]), os.path.realpath(where))
                self.check_generation(w)
        msg = w.send("setup", params=dict(self.base, model_id="inferbench/not-cached"))
        self.assertEqual(msg["error"]["code"], "bad_params")
        self.assertIn("never downloads", msg["error"]["message"])

    @need(HAVE["kernels"], why("kernels"))
    def test_kernelized_runs_on_cpu(self):
        """kernelized replaces the layers transformers marks with kernels: transformers' own
        mapping has no CPU kernel for a Llama's layers (and hub kernels are never fetched here),
        so without local kernels none is replaced and a warning says why; with a local kernel
        repository for RMSNorm, written here, every RMSNorm runs the kernel's forward."""
        from transformers.utils import import_utils

        usable = import_utils.is_kernels_available()
        if "frameworks" in REQUIRE or "all" in REQUIRE:  # requirements.txt pins a pair that works
            self.assertTrue(usable, "transformers does not accept the installed kernels")
        repo = write_local_kernel(tempfile.mkdtemp())
        called = os.path.join(repo, "called")
        w = Worker("torch_llm", env={"HF_HUB_OFFLINE": "1"})
        self.addCleanup(w.close)

        s = w.call("setup", params=dict(self.base, variant="kernelized"))
        self.assertEqual(s["info"]["variant"], "kernelized")
        self.assertEqual(s["info"]["kernel_layers"], "0")
        self.assertEqual(len(s.get("warnings", [])), 1, s.get("warnings"))
        if usable:
            # 2 layers x 2 RMSNorms + the final norm, 2 SiLU activations
            self.assertEqual(s["info"]["kernelizable_layers"], "7")
            self.assertIn("no kernel of the mapping applies on cpu to the 7 layers", s["warnings"][0])
            self.assertIn("RMSNorm x5", s["warnings"][0])
        else:  # the pinned transformers does not accept the installed kernels
            self.assertIn("uses the kernels package only at versions", s["warnings"][0])
        self.check_generation(w)
        self.assertFalse(os.path.exists(called))

        s = w.call("setup", params=dict(self.base, variant="kernelized",
                                        local_kernels="RMSNorm=" + repo))
        if not usable:
            self.assertEqual(s["info"]["kernel_layers"], "0")
            self.assertIn("uses the kernels package only at versions", s["warnings"][0])
            return
        self.assertEqual(s["info"]["kernel_layers"], "5")
        self.assertIsNone(s.get("warnings"))
        self.check_generation(w)
        self.assertTrue(os.path.exists(called), "the local RMSNorm kernel never ran")

        msg = w.send("setup", params=dict(self.base, variant="kernelized",
                                          local_kernels="RMSNorm"))
        self.assertEqual(msg["error"]["code"], "bad_params")
        self.assertIn("LAYER=DIR", msg["error"]["message"])


def write_local_kernel(d):
    """write_local_kernel lays out a local kernel repository as the kernels package's
    LocalLayerRepository reads it (metadata.json beside the package), with an RMSNorm layer that
    computes what LlamaRMSNorm does and leaves a file named "called" beside it when it runs."""
    with open(os.path.join(d, "metadata.json"), "w") as f:
        json.dump({"name": "inferbench-rmsnorm", "id": "inferbench_rmsnorm_test", "version": 1,
                   "license": "Apache-2.0", "python-depends": [], "backend": {"type": "cpu"}}, f)
    with open(os.path.join(d, "__init__.py"), "w") as f:
        f.write("from . import layers  # noqa: F401\n")
    os.makedirs(os.path.join(d, "layers"))
    with open(os.path.join(d, "layers", "__init__.py"), "w") as f:
        f.write("""import os

import torch
from torch import nn

CALLED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "called")


class RMSNorm(nn.Module):
    def forward(self, hidden_states):
        if not os.path.exists(CALLED):
            open(CALLED, "w").close()
        x = hidden_states.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
        return self.weight * x.to(hidden_states.dtype)
""")
    return d


@need(HAVE["torch"], why("torch"))
class TorchProfileTest(unittest.TestCase):
    """--profile: a torch adapter's profile op writes torch.profiler's Chrome trace of the
    profiled calls (viewable in Perfetto), not a cProfile dump; the measured calls are untouched."""

    @need(HAVE["torchvision"], why("torchvision"))
    def test_torch_vision_trace(self):
        w = Worker("torch_vision")
        self.addCleanup(w.close)
        w.call("setup", params={"model": "resnet18", "image_size": 32, "batch_size": 1,
                                "device": "cpu", "threads": 1})
        with tempfile.TemporaryDirectory() as d:
            files = w.call("profile", n=2, dir=d)["files"]
            self.assertEqual(files[0], os.path.join(d, "torch_trace.json"))
            self.assertEqual(files[-1], os.path.join(d, "memory_top.txt"))  # and the memory profile
            with open(files[0]) as f:
                events = json.load(f)["traceEvents"]
            names = {e.get("name", "") for e in events}
            # ResNet-18's convolutions ran under the profiler, each op with its input shapes
            self.assertTrue({"aten::conv2d", "aten::convolution"} & names, sorted(names)[:40])
            convs = [e for e in events if e.get("name") == "aten::conv2d"]
            self.assertGreaterEqual(len(convs), 2 * 20)  # 20 convolutions a call, 2 calls
            self.assertIn("Input Dims", convs[0].get("args", {}))
            # explain's chunks: per operator and input shapes, the convolutions among them
            chunks = [os.path.join(d, "torch-%d.json" % k) for k in range(1, 9)]
            self.assertEqual(files[1:-1], chunks)
            with open(chunks[0]) as f:
                c = json.load(f)
            self.assertEqual((c["source"], c["unit"]), ("torch", "ms"))
            conv = [e for e in c["entries"] if e["name"].startswith("aten::conv2d [1×3×32×32, 64×3×7×7")]
            self.assertEqual(len(conv), 1, [e["name"] for e in c["entries"]][:20])
            self.assertEqual(conv[0]["count"], c["calls"])
            self.assertGreaterEqual(conv[0]["incl"], conv[0]["self"])
            self.assertTrue(any(k.endswith(";aten::convolution") for k in c["stacks"]), list(c["stacks"])[:10])
        check_run(self, w, 2, 1)

    def test_torch_llm_trace(self):
        w = Worker("torch_llm")
        self.addCleanup(w.close)
        w.call("setup", params={"backend": "torch", "vocab_size": 64, "hidden_size": 32,
                                "num_layers": 1, "num_heads": 2, "prompt_tokens": 4,
                                "max_new_tokens": 3, "device": "cpu", "threads": 1})
        before = w.call("run", n=2)
        with tempfile.TemporaryDirectory() as d:
            files = w.call("profile", n=2, dir=d)["files"]
            self.assertEqual(files[0], os.path.join(d, "torch_trace.json"))
            self.assertEqual(files[-1], os.path.join(d, "memory_top.txt"))  # and the memory profile
            with open(files[0]) as f:
                trace = json.load(f)
            events = trace["traceEvents"]
            names = {e.get("name", "") for e in events}
            # CPU ops of the model ran under the profiler: matrix products, the embedding.
            self.assertTrue(any(n.startswith("aten::") for n in names), sorted(names)[:20])
            self.assertTrue({"aten::embedding", "aten::mm", "aten::addmm", "aten::matmul",
                             "aten::linear"} & names, sorted(names)[:40])
            self.assertTrue(all("ts" in e for e in events if e.get("ph") == "X"))
            # The session's events stay within the bound: unbounded, this model's 0.25 s chunks
            # held 700,000 of them (7 GiB in the worker).
            held = 0
            for path in files[1:-1]:
                with open(path) as f:
                    held += sum(e["count"] for e in json.load(f)["entries"])
            from inferbench_worker.profiling import TORCH_EVENTS
            self.assertLessEqual(held, TORCH_EVENTS)
        # The worker still measures after profiling.
        after = w.call("run", n=2)
        self.assertEqual(len(after["latency_ms"]), 2)
        self.assertEqual(len(before["latency_ms"]), 2)



def profiled(t, prof):
    """profiled loads a cProfile dump with pstats and returns the (file, function) of every
    function it holds."""
    st = pstats.Stats(prof)
    t.assertGreater(st.total_calls, 0)
    return {(os.path.basename(f), fn) for (f, _, fn) in st.stats}


class CProfileTest(unittest.TestCase):
    """--profile for the adapters without a profiler of their own: cProfile's dump of the
    profiled calls, readable by pstats and snakeviz, holding the adapter's call into its
    framework."""

    @need(HAVE["jax"] and HAVE["flax"], why("jax", "flax"))
    def test_jax_vision(self):
        w = Worker("jax_vision")
        self.addCleanup(w.close)
        w.call("setup", params={"model": "resnet18", "image_size": 32, "batch_size": 1,
                                "device": "cpu"})
        with tempfile.TemporaryDirectory() as d:
            files = w.call("profile", n=3, dir=d)["files"]
            self.assertEqual(files, [os.path.join(d, "python.prof")] + [os.path.join(d, "python-%d.json" % k) for k in range(1, 9)] + [os.path.join(d, "memory_top.txt")])
            funcs = profiled(self, files[0])
            self.assertIn(("jax_vision.py", "run"), funcs)
            # the jitted call went through JAX's dispatch (pjit), and its result was awaited
            self.assertTrue(any("block_until_ready" in fn for _, fn in funcs), sorted(funcs)[:40])
        check_run(self, w, 2, 1)

    @need(HAVE["onnxruntime"] and HAVE["torch"] and HAVE["torchvision"] and HAVE["onnx"]
          and torch_compiles(), why("onnxruntime", "onnx", "torch", "torchvision"))
    def test_onnxruntime(self):
        d = export_resnet18(self)
        w = Worker("onnxruntime", cwd=d)
        self.addCleanup(w.close)
        w.call("setup", params={"model": "resnet18.onnx", "batch_size": 2, "threads": 1})
        with tempfile.TemporaryDirectory() as pd:
            files = w.call("profile", n=3, dir=pd)["files"]
            self.assertEqual(files, [os.path.join(pd, "python.prof")] + [os.path.join(pd, "python-%d.json" % k) for k in range(1, 9)] + [os.path.join(pd, "memory_top.txt")])
            funcs = profiled(self, files[0])
            self.assertIn(("ort.py", "iteration"), funcs)
            # InferenceSession.run, three times
            st = pstats.Stats(files[0])
            runs = [v for (f, _, fn), v in st.stats.items()
                    if fn == "run" and "onnxruntime" in f]
            self.assertTrue(runs, sorted(funcs)[:40])
            # primitive calls of InferenceSession.run: one per call of every chunk (at least
            # n/8 calls and 0.25 s each, explain's chunks)
            calls = 0
            for f in files[1:-1]:
                with open(f) as fh:
                    calls += json.load(fh)["calls"]
            self.assertGreaterEqual(calls, 8)
            self.assertEqual(runs[0][1], calls)
        check_run(self, w, 2, 2)


if __name__ == "__main__":
    unittest.main()
