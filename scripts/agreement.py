"""agreement.py: each framework adapter's p50 against a plain timing loop in the same framework.

For every case (an adapter and a model: eager and compiled torch vision, a ViT, JAX, ONNX
Runtime, the transformers LLM eager and compiled, a pyfunc benchmark) the same model is built
twice, once inside an inferbench worker (the adapter, spoken to through the worker protocol,
timed in the worker as `inferbench run` times it) and once here in a plain loop (time.perf_counter around the call, block_until_ready / nothing else). The
two are measured interleaved, ROUNDS rounds of ITERS iterations each, alternating which goes first,
and the p50 of all samples of each side is compared. Both sides run one intra-op thread.

Usage: .venv/bin/python scripts/agreement.py [--rounds 10] [--iters 20] [--only torch_vision,1,...]
Prints one line per adapter and a Markdown table (docs/performance.md, "Framework adapters").
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = os.path.join(ROOT, "internal", "workers", "python")
sys.path.insert(0, WORKER)
os.environ.setdefault("OMP_NUM_THREADS", "1")


class Worker:
    def __init__(self, adapter, cwd=None):
        env = dict(os.environ, PYTHONPATH=WORKER, OMP_NUM_THREADS="1",
                   INFERBENCH_WORKER_LOG="WARNING")
        self.p = subprocess.Popen([sys.executable, "-m", "inferbench_worker"], cwd=cwd or ROOT,
                                  env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.id = 0
        self.call("hello", adapter=adapter)

    def call(self, op, **kw):
        self.id += 1
        kw.update(id=self.id, op=op)
        self.p.stdin.write(json.dumps(kw) + "\n")
        self.p.stdin.flush()
        msg = json.loads(self.p.stdout.readline())
        if not msg.get("ok"):
            raise SystemExit("%s: %s" % (op, msg.get("error")))
        return msg

    def close(self):
        self.call("teardown")
        self.p.stdin.close()
        self.p.wait(timeout=60)


def plain_torch_vision(model="resnet18", size=64, compiled=False):
    import torch
    import torchvision

    from inferbench_worker.torch_vision import build_model

    torch.set_num_threads(1)
    torch.manual_seed(0)
    m = build_model(torchvision, model, size).eval()
    x = torch.randn(1, 3, size, size)
    f = torch.compile(m) if compiled else m
    with torch.inference_mode():
        f(x)  # compiles

    def step():
        with torch.inference_mode():
            f(x)
    return step


def plain_jax_vision():
    import jax
    import jax.numpy as jnp
    import flax

    from inferbench_worker.jax_vision import build

    model = build(flax, jnp, "resnet18", jnp.float32)
    x = jnp.ones((1, 64, 64, 3), jnp.float32)
    v = jax.jit(model.init)(jax.random.PRNGKey(0), x)
    f = jax.jit(lambda v, x: model.apply(v, x)).lower(v, x).compile()
    f(v, x).block_until_ready()
    return lambda: f(v, x).block_until_ready()


def plain_onnxruntime(path):
    import numpy as np
    import onnxruntime as ort

    o = ort.SessionOptions()
    o.intra_op_num_threads = 1
    s = ort.InferenceSession(path, sess_options=o, providers=["CPUExecutionProvider"])
    feeds = {"x": np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype("float32")}
    return lambda: s.run(None, feeds)


def plain_torch_llm(compiled=False):
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig

    torch.set_num_threads(1)
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=1024, hidden_size=128, intermediate_size=512, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=2048,
                      pad_token_id=0, bos_token_id=1, eos_token_id=2)
    m = AutoModelForCausalLM.from_config(cfg).eval()
    if compiled:  # what a user writes: a static cache and a compiled forward
        m.generation_config.cache_implementation = "static"
        m.generation_config.disable_compile = True
        m.forward = torch.compile(m.forward, mode="reduce-overhead")
    ids = torch.randint(0, 1024, (1, 32))
    mask = torch.ones_like(ids)

    def step():
        with torch.inference_mode():
            m.generate(ids, attention_mask=mask, max_new_tokens=16, min_new_tokens=16,
                       do_sample=False, pad_token_id=0)
    return step


PYFUNC = """
def run_squares(n):
    \"\"\"a seed-style benchmark function: pure Python, a few milliseconds a call\"\"\"
    return {"result": sum(i * i for i in range(n))}
"""


def write_pyfunc(path):
    with open(path, "w") as f:
        f.write(PYFUNC)


def plain_pyfunc(path, n):
    import importlib.util

    spec = importlib.util.spec_from_file_location("agreement_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return lambda: mod.run_squares(n)


def export_resnet18(path):
    import torch
    import torchvision

    m = torchvision.models.resnet18(weights=None).eval()
    torch.onnx.export(m, (torch.randn(1, 3, 64, 64),), path, input_names=["x"],
                      output_names=["logits"], verbose=False)


def cases(tmp):
    onnx_path = os.path.join(tmp, "resnet18.onnx")
    py_path = os.path.join(tmp, "agreement_bench.py")
    llm = {"backend": "transformers", "device": "cpu", "threads": 1, "prompt_tokens": 32,
           "max_new_tokens": 16}
    return [
        ("torch_vision", "resnet18 64x64 b1 eager", {"model": "resnet18", "image_size": 64,
                                                       "device": "cpu", "threads": 1},
         plain_torch_vision, None),
        ("torch_vision", "resnet18 64x64 b1 compiled",
         {"model": "resnet18", "image_size": 64, "device": "cpu", "threads": 1,
          "variant": "compiled"}, lambda: plain_torch_vision(compiled=True), None),
        ("torch_vision", "vit_ti_16 128x128 b1 eager",
         {"model": "vit_ti_16", "image_size": 128, "device": "cpu", "threads": 1},
         lambda: plain_torch_vision("vit_ti_16", 128), None),
        ("jax_vision", "resnet18 64x64 b1 jit", {"model": "resnet18", "image_size": 64,
                                                   "device": "cpu"}, plain_jax_vision, None),
        ("onnxruntime", "resnet18 64x64 b1 (exported here)", {"model": onnx_path, "threads": 1},
         lambda: plain_onnxruntime(onnx_path), lambda: export_resnet18(onnx_path)),
        ("torch_llm", "transformers Llama 2x128, 32 in, 16 out, eager", llm, plain_torch_llm,
         None),
        ("torch_llm", "transformers Llama 2x128, 32 in, 16 out, compiled",
         dict(llm, variant="compiled"), lambda: plain_torch_llm(compiled=True), None),
        ("pyfunc", "run_squares(n=200000), pure Python",
         {"file": py_path, "function": "run_squares", "n": 200000},
         lambda: plain_pyfunc(py_path, 200000), lambda: write_pyfunc(py_path)),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--only", default="",
                    help="adapters (torch_vision,...) or case numbers (1,3) to run, comma-separated")
    a = ap.parse_args()
    import tempfile

    tmp = tempfile.mkdtemp()
    rows = []
    only = set(a.only.split(",")) if a.only else set()
    for i, (adapter, what, params, plain, prep) in enumerate(cases(tmp), 1):
        if only and adapter not in only and str(i) not in only:
            continue
        if prep:
            prep()
        w = Worker(adapter)
        w.call("setup", params=params)
        w.call("warmup", n=a.warmup)
        step = plain()
        for _ in range(a.warmup):
            step()
        ours, loop = [], []
        pc = time.perf_counter_ns
        for r in range(a.rounds):
            def run_plain():
                for _ in range(a.iters):
                    t0 = pc()
                    step()
                    loop.append((pc() - t0) / 1e6)

            def run_ours():
                ours.extend(w.call("run", n=a.iters)["latency_ms"])
            for f in ((run_ours, run_plain) if r % 2 == 0 else (run_plain, run_ours)):
                f()
        w.close()
        p_ours, p_loop = statistics.median(ours), statistics.median(loop)
        delta = 100 * (p_ours - p_loop) / p_loop
        rows.append((adapter, what, p_ours, p_loop, delta, len(ours)))
        print("%-13s %-52s inferbench p50 %8.3f ms  plain loop p50 %8.3f ms  %+6.1f%%  (%d samples each)"
              % rows[-1], flush=True)
    print()
    print("| adapter | model and input | inferbench p50 | plain loop p50 | difference |")
    print("|---|---|---|---|---|")
    bad = 0
    for adapter, what, p_ours, p_loop, delta, n in rows:
        print("| %s | %s | %.3f ms | %.3f ms | %+.1f%% |" % (adapter, what, p_ours, p_loop, delta))
        bad += abs(delta) > 10
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
