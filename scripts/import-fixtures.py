#!/usr/bin/env python3
"""Makes the fixtures of `inferbench import` (internal/serveimport/testdata): each serving tool's
own result files, written by the tool itself against `inferbench mockserver`, a few dozen requests
each. Never a CI dependency: run it by hand when a tool's version changes, with the interpreter of
the peers' environment (scripts/peers-env.sh: guidellm, AIPerf from PyPI):

    scripts/peers-env.sh /work/.peers-venv
    git clone https://github.com/llm-d/llm-d-benchmark /tmp/llm-d-benchmark
    /work/.peers-venv/bin/python scripts/import-fixtures.py --bin ./inferbench --llmd-src /tmp/llm-d-benchmark

- vllm: `vllm bench serve`'s own code (vllm/benchmarks/serve.py of vLLM's wheel from PyPI,
  installed without dependencies into --vllm-deps; its main() with its own argument parser) with
  --save-result --save-detailed, and once without --save-detailed. The vllm command itself needs
  vLLM's CUDA kernels; the benchmark does not, but its dataset module imports
  vllm.lora.utils, which reaches the model executor: that one module is replaced by its one
  function the benchmark uses (get_adapter_absolute_path, for LoRA paths, unused here) as the
  identity. The request function, the metrics and the file written are vLLM's.
- aiperf: `aiperf profile`, its artifact folder's profile_export_aiperf.json and
  profile_export.jsonl (per request records).
- guidellm: `guidellm run` with --output kind=json (benchmarks.json, each request's timings).
- llm-d: llm-d-benchmark's converter (llmdbenchmark/analysis/benchmark_report, from
  github.com/llm-d/llm-d-benchmark at --llmd-src) run on the guidellm and vLLM files, report v0.2.
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

MOCK = ["--shape", "vllm", "--ttft-ms", "uniform(10,30)", "--itl-ms", "uniform(2,6)", "--output-tokens", "16"]
N, C = 24, 4


def serve(a, port):
    p = subprocess.Popen([a.bin, "mockserver", "--addr", f"127.0.0.1:{port}"] + MOCK, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5).read()
            return p
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("mockserver did not start")


def tokenizer_dir(work):
    d = os.path.join(work, "tokenizer")
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(os.path.dirname(__file__), "..", "internal", "workload", "testdata", "tokenizer.json"), d)
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 100000}, f)
    return d


def tool(a, name):
    return os.path.join(os.path.dirname(a.python), name)


def run(cmd, **kw):
    print("+", " ".join(cmd), file=sys.stderr)
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited {p.returncode}: {p.stdout[-1500:]} {p.stderr[-3000:]}")
    return p.stdout


VLLM_MAIN = r'''
import sys, types
m = types.ModuleType("vllm.lora.utils")
m.get_adapter_absolute_path = lambda p: p
sys.modules["vllm.lora.utils"] = m
from vllm.benchmarks import serve
from vllm.utils.argparse_utils import FlexibleArgumentParser
p = FlexibleArgumentParser()
serve.add_cli_args(p)
serve.main(p.parse_args(sys.argv[1:]))
'''


# The pure-Python modules vLLM's benchmark imports beyond the peers' environment (torch,
# transformers, aiohttp are there), with vLLM's own wheel, installed without dependencies.
VLLM_DEPS = ["pybase64", "cbor2", "openai-harmony", "openai", "httpx2", "cachetools", "cloudpickle", "py-cpuinfo"]


def vllm_deps(a):
    d = os.path.abspath(a.vllm_deps)
    if not os.path.isfile(os.path.join(d, "vllm", "benchmarks", "serve.py")):
        run([a.python, "-m", "pip", "install", "--quiet", "--no-deps", "--target", d, f"vllm=={a.vllm_version}"] + VLLM_DEPS)
    return d


def vllm(a, port, work, out):
    main = os.path.join(work, "vllm_bench_serve.py")
    with open(main, "w") as f:
        f.write(VLLM_MAIN)
    env = dict(os.environ, PYTHONPATH=vllm_deps(a))
    for name, extra in (("detailed.json", ["--save-detailed"]), ("aggregate.json", [])):
        run([a.python, main, "--backend", "openai-chat", "--base-url", f"http://127.0.0.1:{port}", "--endpoint", "/v1/chat/completions",
             "--model", "mock", "--tokenizer", tokenizer_dir(work), "--dataset-name", "random", "--random-input-len", "32",
             "--random-output-len", "16", "--num-prompts", str(N), "--max-concurrency", str(C), "--request-rate", "inf",
             "--num-warmups", "0", "--save-result", "--result-dir", out, "--result-filename", name, "--ignore-eos",
             "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,90,99"] + extra, env=env)


def aiperf(a, port, work, out):
    art = os.path.join(work, "aiperf")
    run([tool(a, "aiperf"), "profile", "--model", "mock", "--url", f"http://127.0.0.1:{port}", "--endpoint-type", "chat", "--streaming",
         "--concurrency", str(C), "--request-count", str(N), "--prompt-input-tokens-mean", "32", "--output-tokens-mean", "16",
         "--tokenizer", tokenizer_dir(work), "--artifact-dir", art, "--ui-type", "none"])
    for f in ("profile_export_aiperf.json", "profile_export.jsonl"):
        src = glob.glob(os.path.join(art, "**", f), recursive=True)
        if not src:
            raise RuntimeError(f"aiperf wrote no {f} in {art}")
        shutil.copy(src[0], os.path.join(out, f))


def guidellm(a, port, work, out):
    run([tool(a, "guidellm"), "run", "--backend", f"kind=openai_http,target=http://127.0.0.1:{port},model=mock",
         "--profile", f"kind=concurrent,streams={C}", "--constraint", f"kind=max_requests,count={N}",
         "--data", "kind=synthetic_text,prompt_tokens=32,output_tokens=16", "--tokenizer", f"kind=hf_auto,model={tokenizer_dir(work)}",
         "--output", f"kind=json,path={os.path.join(out, 'benchmarks.json')}", "--disable-console-interactive"])


def llmd(a, out, fixtures):
    src = os.path.join(a.llmd_src, "llmdbenchmark", "analysis")
    env = dict(os.environ, PYTHONPATH=src)
    for gen, f, name in (("guidellm", os.path.join(fixtures, "guidellm", "benchmarks.json"), "guidellm_br0.2.yaml"),
                         ("vllm-benchmark", os.path.join(fixtures, "vllm", "detailed.json"), "vllm_br0.2.yaml"),
                         ("aiperf", os.path.join(fixtures, "aiperf", "profile_export_aiperf.json"), "aiperf_br0.2.yaml")):
        run([a.python, "-m", "benchmark_report.cli", f, os.path.join(out, name), "-w", gen, "-b", "0.2", "-f"], env=env)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the inferbench binary (its mockserver serves)")
    ap.add_argument("--python", default=sys.executable, help="the peers' interpreter")
    ap.add_argument("--vllm-version", default="0.33.0")
    ap.add_argument("--vllm-deps", default=".vllm-bench", help="a folder for vLLM's package and the modules its benchmark imports (pip install --no-deps --target; made when absent)")
    ap.add_argument("--llmd-src", help="a checkout of github.com/llm-d/llm-d-benchmark")
    ap.add_argument("--tools", default="vllm,aiperf,guidellm,llm-d")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "internal", "serveimport", "testdata"))
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    work = tempfile.mkdtemp(prefix="import-fixtures-")
    port = 18700
    for t in a.tools.split(","):
        port += 1
        out = os.path.join(a.out, t)
        os.makedirs(out, exist_ok=True)
        if t == "llm-d":
            llmd(a, out, a.out)
            continue
        srv = serve(a, port)
        try:
            {"vllm": vllm, "aiperf": aiperf, "guidellm": guidellm}[t](a, port, work, out)
        finally:
            srv.terminate()
            srv.wait()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
