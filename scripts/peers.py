#!/usr/bin/env python3
"""The serving clients side by side (make peers): inferbench, vLLM's published request function,
guidellm and AIPerf against the same mockserver, one at a time, the server pinned to one core and
the client to another. For each tool and concurrency: requests per second, the client's CPU per
request, its TTFT and ITL p99 against the server's own record of the same requests (mockserver
--record), and the connections it opened. Writes a markdown table (docs/peers.md).

Run by `make peers`, with the interpreter of a separate environment holding the peers
(.peers-venv: guidellm, aiperf, aiohttp; vLLM's request function extracted from its wheel), never
a CI dependency.
"""

import argparse
import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

# The accuracy server: a TTFT and gaps to measure. The ceiling server answers at once, so that
# requests per second and CPU per request are the client's.
ACCURACY = ["--shape", "vllm", "--ttft-ms", "uniform(10,30)", "--itl-ms", "10", "--output-tokens", "32"]
CEILING = ["--shape", "vllm", "--output-tokens", "32"]


def pct(xs, q):
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(int(q * (len(s) - 1) + 0.5), len(s) - 1)]


def get(url):
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.load(r)


class Server:
    """The mockserver, pinned to core 0, recording every request."""

    def __init__(self, bin, port, record, timing):
        self.port = port
        self.proc = subprocess.Popen(
            ["taskset", "-c", "0", bin, "mockserver", "--addr", f"127.0.0.1:{port}", "--record", str(record)] + timing,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                get(f"http://127.0.0.1:{port}/debug/stats")
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("mockserver did not start")

    def truth(self, skip=0):
        """The server's connections (less the ones asking) and its TTFT and gap p99 in ms, over
        the requests after the first skip (a tool's warm-up)."""
        st = get(f"http://127.0.0.1:{self.port}/debug/stats")
        em = sorted(get(f"http://127.0.0.1:{self.port}/debug/emits") or [], key=lambda e: ms(e["received"]))
        ttft, gaps = [], []
        for e in em[skip:]:
            if e["status"] != 200 or not e["events"]:
                continue
            ttft.append(ms(e["first_token"]) - ms(e["received"]))
            ev = [ms(t) for t in e["events"]]
            gaps += [b - a for a, b in zip(ev, ev[1:])]
        # Two connections before these reads: the readiness probe and /debug/stats itself.
        return {"connections": st["Connections"] - 2, "ttft_p99": pct(ttft, 0.99), "itl_p99": pct(gaps, 0.99), "n": len(ttft)}

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def cores_busy(cores=(0, 1)):
    """CPU seconds the given cores have been busy (steal included: time the hypervisor gave
    other guests), from /proc/stat."""
    tick = os.sysconf("SC_CLK_TCK")
    busy = 0
    with open("/proc/stat") as f:
        for line in f:
            name, *v = line.split()
            if name in {f"cpu{c}" for c in cores}:
                # user nice system idle iowait irq softirq steal ...
                busy += sum(int(x) for i, x in enumerate(v[:8]) if i not in (3, 4))
    return busy / tick


def proc_cpu(pid):
    """CPU seconds a process has used so far (its own threads), from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) / os.sysconf("SC_CLK_TCK")


def ms(ts):
    """An RFC 3339 time with nanoseconds, in ms since the epoch (float)."""
    from datetime import datetime
    head, frac = ts.rstrip("Z").split(".") if "." in ts else (ts.rstrip("Z"), "0")
    tz = ""
    for sep in ("+", "-"):
        if sep in frac:
            frac, tz = frac.split(sep, 1)
            tz = sep + tz
    sec = datetime.fromisoformat(head + (tz or "+00:00")).timestamp()
    return sec * 1e3 + float("0." + frac) * 1e3


def run_pinned(cmd, env=None, cwd=None):
    """Runs cmd on core 1; returns its wall time and CPU time in s."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(["taskset", "-c", "1"] + cmd, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited {p.returncode}: {p.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), p.stdout


def commit():
    """The checkout's commit, marked -dirty with uncommitted changes (the binary is built from it)."""
    try:
        c = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"]).returncode != 0
        return c + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def warmup(c):
    """inferbench's default warm-up of a closed loop: a call per slot (at least 3), not measured."""
    return max(3, c)


def inferbench(a, port, c, n, work):
    # A folder per run (the port is): with one per c, the accuracy run read whichever run.json
    # sorted last, the ceiling run's when both started in the same second (run ids are the
    # second, then a random suffix).
    d = os.path.join(work, f"ib{c}-{port}")
    os.makedirs(d)
    with open(os.path.join(d, "peers.yaml"), "w") as f:
        f.write(f"""name: peers
subject: {{kind: openai, url: "http://127.0.0.1:{port}/v1", model: mock, metrics_url: none,
  workload: {{input_tokens: 32, output_tokens: 32}}}}
load: {{mode: concurrency, concurrency: {c}, measurement_iterations: {n}}}
""")
    wall, cpu, _ = run_pinned([a.bin, "run", "peers.yaml", "--no-store", "--no-request-log", "--output-dir", "out"], cwd=d)
    runs = [os.path.join(d, "out", x) for x in os.listdir(os.path.join(d, "out")) if x != "latest"]
    if len(runs) != 1:
        raise RuntimeError(f"inferbench wrote {len(runs)} runs in {d}, want 1")
    with open(os.path.join(runs[0], "run.json")) as f:
        sc = json.load(f)["scenarios"][0]
    m = sc["metrics"]
    # How late inferbench read: the kernel stamps a read with its newest data, so a read late by
    # more than the gap between tokens merges the first token with later ones and its TTFT takes
    # the newest one's time (docs/metrics.md, read_delay_ms and ttft_coalesced_rate).
    read_delay = (m.get("read_delay_ms") or {}).get("summary") or {}
    coalesced = (m.get("ttft_coalesced_rate") or {}).get("value")
    return {"rps": m["requests_per_s"]["value"], "cpu": cpu, "sent": n + warmup(c), "ttft_p99": m["ttft_ms"]["summary"]["p99"],
            "itl_p99": m["itl_ms"]["summary"]["p99"], "client_bound": bool(sc.get("extra", {}).get("client_bound")),
            "read_delay_p99": read_delay.get("p99"), "ttft_coalesced": coalesced}


VLLM = r'''
import asyncio, json, sys, time
import aiohttp
from vllm.benchmarks.lib.endpoint_request_func import RequestFuncInput, async_request_openai_chat_completions
port, c, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
async def main():
    # As vllm bench serve opens its session.
    conn = aiohttp.TCPConnector(limit=c, limit_per_host=c, keepalive_timeout=60, enable_cleanup_closed=True, force_close=False)
    sem = asyncio.Semaphore(c)
    async with aiohttp.ClientSession(connector=conn, trust_env=True, timeout=aiohttp.ClientTimeout(total=6 * 60 * 60)) as s:
        async def one(i):
            async with sem:
                return await async_request_openai_chat_completions(RequestFuncInput(
                    prompt="the quick brown fox " * 8, api_url=f"http://127.0.0.1:{port}/v1/chat/completions",
                    prompt_len=32, output_len=32, model="mock"), s)
        t0 = time.perf_counter()
        outs = await asyncio.gather(*(one(i) for i in range(n)))
        wall = time.perf_counter() - t0
    ok = [o for o in outs if o.success]
    print(json.dumps({"rps": len(ok) / wall, "ttft": [o.ttft * 1e3 for o in ok], "itl": [x * 1e3 for o in ok for x in o.itl]}))
asyncio.run(main())
'''


def vllm(a, port, c, n, work):
    path = os.path.join(work, "vllm_func.py")
    with open(path, "w") as f:
        f.write(VLLM)
    env = dict(os.environ, PYTHONPATH=a.vllm_lib)
    wall, cpu, out = run_pinned([a.python, path, str(port), str(c), str(n)], env=env)
    r = json.loads(out.strip().splitlines()[-1])
    return {"rps": r["rps"], "cpu": cpu, "ttft_p99": pct(r["ttft"], 0.99), "itl_p99": pct(r["itl"], 0.99), "client_bound": None}


def tokenizer_dir(work):
    """A Hugging Face tokenizer folder for the peers that need one (guidellm, AIPerf): the test
    tokenizer of package workload; no model hub is reached."""
    d = os.path.join(work, "tokenizer")
    if not os.path.isdir(d):
        os.makedirs(d)
        shutil.copy(os.path.join(os.path.dirname(__file__), "..", "internal", "workload", "testdata", "tokenizer.json"), d)
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 100000}, f)
    return d


def tool(a, name):
    return os.path.join(os.path.dirname(a.python), name)


def guidellm(a, port, c, n, work):
    out = os.path.join(work, f"guidellm-{port}.json")
    wall, cpu, _ = run_pinned([tool(a, "guidellm"), "run", "--backend", f"kind=openai_http,target=http://127.0.0.1:{port},model=mock",
                               "--profile", f"kind=concurrent,streams={c}", "--constraint", f"kind=max_requests,count={n}",
                               "--data", "kind=synthetic_text,prompt_tokens=32,output_tokens=32",
                               "--tokenizer", f"kind=hf_auto,model={tokenizer_dir(work)}", "--output", f"kind=json,path={out}",
                               "--disable-console-interactive"])
    with open(out) as f:
        b = json.load(f)["benchmarks"][0]
    m = b["metrics"]
    ok = m["request_totals"]["successful"]
    # guidellm's inter_token_latency_ms is each request's mean gap, not each gap.
    return {"rps": ok / b["duration"], "cpu": cpu, "ttft_p99": m["time_to_first_token_ms"]["successful"]["percentiles"]["p99"],
            "itl_p99": m["inter_token_latency_ms"]["successful"]["percentiles"]["p99"], "client_bound": None}


def aiperf(a, port, c, n, work):
    out = os.path.join(work, f"aiperf-{port}")
    wall, cpu, _ = run_pinned([tool(a, "aiperf"), "profile", "--model", "mock", "--url", f"http://127.0.0.1:{port}", "--endpoint-type", "chat",
                               "--streaming", "--concurrency", str(c), "--request-count", str(n), "--prompt-input-tokens-mean", "32",
                               "--output-tokens-mean", "32", "--tokenizer", tokenizer_dir(work), "--artifact-dir", out, "--ui-type", "none"])
    with open(os.path.join(out, "profile_export_aiperf.json")) as f:
        d = json.load(f)
    # inter_chunk_latency is each gap between chunks, as the server's gaps are.
    itl = d.get("inter_chunk_latency") or d["inter_token_latency"]
    return {"rps": d["request_throughput"]["avg"], "cpu": cpu, "ttft_p99": d["time_to_first_token"]["p99"], "itl_p99": itl["p99"], "client_bound": None}


def floor(a, port, c, n, work):
    """The floor: scripts/floor-reader.c, a single-threaded epoll client with no HTTP library,
    compiled here (gcc -O2). Its read delay is what this machine gives any client."""
    exe = os.path.join(work, "floor-reader")
    if not os.path.exists(exe):
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "floor-reader.c")
        subprocess.run(["gcc", "-O2", "-o", exe, src], check=True)
    wall, cpu, out = run_pinned([exe, str(port), str(c), str(n)])
    r = json.loads(out)
    return {"rps": r["rps"], "cpu": cpu, "ttft_p99": pct(r["ttft"], 0.99), "itl_p99": pct(r["itl"], 0.99), "client_bound": None,
            "read_delay_p99": pct(r["read_delay"], 0.99), "ttft_coalesced": r["ttft_coalesced"]}


TOOLS = {"inferbench": inferbench, "vllm": vllm, "guidellm": guidellm, "aiperf": aiperf, "floor": floor}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bin", required=True, help="the inferbench binary (its mockserver serves)")
    ap.add_argument("--python", default=sys.executable, help="the peers' interpreter")
    ap.add_argument("--vllm-lib", required=True, help="folder holding vllm/benchmarks/lib from vLLM's wheel")
    ap.add_argument("--concurrency", default="64,256,512")
    ap.add_argument("--requests", type=int, default=4000, help="requests of each ceiling run (accuracy runs: half)")
    ap.add_argument("--tools", default="inferbench,floor,vllm,guidellm,aiperf")
    ap.add_argument("--out", default="-")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    load0 = os.getloadavg()[0]
    work = tempfile.mkdtemp(prefix="peers-")
    rows = []
    port = 18600
    for c in [int(x) for x in a.concurrency.split(",")]:
        for tool in a.tools.split(","):
            port += 1
            srv = Server(a.bin, port, 0, CEILING)
            try:
                ceil = TOOLS[tool](a, port, c, a.requests, work)
            finally:
                srv.stop()
            port += 1
            n = max(a.requests // 2, c)
            warm = warmup(c) if tool == "inferbench" else 0
            srv = Server(a.bin, port, n + warm + 16, ACCURACY)
            try:
                # What else ran on the two pinned cores meanwhile: their busy time less the
                # server's and the tool's own. On a shared machine it is where a late read comes from.
                busy0, srv0, t0 = cores_busy(), proc_cpu(srv.proc.pid), time.monotonic()
                r = TOOLS[tool](a, port, c, n, work)
                wall = time.monotonic() - t0
                others = cores_busy() - busy0 - (proc_cpu(srv.proc.pid) - srv0) - r["cpu"]
                r["others"] = max(others, 0) / (2 * wall)
                t = srv.truth(skip=warm)
            finally:
                srv.stop()
            r["rps"], r["cpu"], r["sent"] = ceil["rps"], ceil["cpu"], ceil.get("sent", a.requests)
            rows.append((tool, c, r, t))
            print(f"{tool} c={c}: {r['rps']:.0f} req/s, {1e6 * r['cpu'] / r['sent']:.0f} us CPU/req, TTFT p99 {r['ttft_p99'] - t['ttft_p99']:+.1f} ms, "
                  f"ITL p99 {r['itl_p99'] - t['itl_p99']:+.1f} ms, {t['connections']} connections, others' CPU {100 * r['others']:.0f}%", file=sys.stderr)
    lines = ["| tool | c | req/s | CPU µs/request | TTFT p99 error ms | ITL p99 error ms | connections | client_bound | read delay p99 ms | first token coalesced | others' CPU |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for tool, c, r, t in rows:
        cb = {True: "yes", False: "no", None: "-"}[r["client_bound"]]
        rd = "-" if r.get("read_delay_p99") is None else f"{r['read_delay_p99']:.1f}"
        co = "-" if r.get("ttft_coalesced") is None else f"{100 * r['ttft_coalesced']:.1f}%"
        lines.append(f"| {tool} | {c} | {r['rps']:.0f} | {1e6 * r['cpu'] / r['sent']:.0f} | {r['ttft_p99'] - t['ttft_p99']:+.1f} | "
                     f"{r['itl_p99'] - t['itl_p99']:+.1f} | {t['connections']} | {cb} | {rd} | {co} | {100 * r['others']:.0f}% |")
    cmd = "make peers" if a.requests == 4000 and a.concurrency == "64,256,512" else \
        f"make peers PEERS_ARGS='--requests {a.requests} --concurrency {a.concurrency}'"
    head = f"""# inferbench and its peers, side by side

Written by `{cmd}` (scripts/peers.py) at commit {commit()} on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, on a machine of
{os.cpu_count()} CPUs (load average {load0:.2f} at the start, {os.getloadavg()[0]:.1f} when the run ended, the tools' own processes included; the
"others' CPU" column says what other processes took). Every figure below
is from that one run; rerun the command to reproduce them.

Each tool in turn sends chat requests (streamed, 32 input and 32 output tokens) to `inferbench
mockserver --shape vllm`, the server pinned to CPU 0 (`taskset -c 0`) and the tool to CPU 1:

- **req/s** and **CPU µs/request**: against a server that answers at once (`--output-tokens 32`),
  {a.requests} requests: the client's ceiling, and the CPU time of the tool's whole process tree
  (start-up included: Python tools import their libraries, guidellm starts worker processes) per
  request sent (inferbench's default warm-up, a request per slot before the measured ones,
  included);
- **TTFT p99 error** and **ITL p99 error**: against a server with a TTFT of `uniform(10,30)` ms and
  10 ms between tokens (`--record`), {max(a.requests // 2, 1)} requests: the tool's p99 minus the
  server's own p99 over the same requests (inferbench's warm-up left out of both) (TTFT from the request's last byte to the first token
  written; gaps between content events written). guidellm's inter-token latency is each
  request's mean gap, AIPerf's the inter-chunk latency, vLLM's request function its per-chunk
  `itl`, inferbench's `itl_ms`;
- **connections**: those the server accepted during the accuracy run;
- **client_bound**: inferbench's own flag in that run (the others have none);
- **read delay p99** and **first token coalesced**: inferbench's `read_delay_ms` p99 (each
  request's longest delay from the kernel receiving response bytes to reading them) and
  `ttft_coalesced_rate` in the accuracy run, and the same two figures of the floor. A read is
  stamped with its newest data, so a read late by more than one gap between tokens puts the first
  token at a later token's time: TTFT reads high by up to the read delay;
- **others' CPU**: the busy time of the two pinned cores during the accuracy run (steal
  included) less the server's and the tool's own, as a share of both cores: what other processes
  took. Above a few percent the figures are the machine's, not the tool's.

The tools: inferbench at this commit; **floor**, the least a streaming client can do
(scripts/floor-reader.c, compiled with `gcc -O2`: one thread, one epoll loop, a keep-alive
connection per slot, recvmsg with the kernel's receive stamps, no HTTP library and no JSON
parser), whose read delays are this machine's, not a tool's; vLLM's request function (`async_request_openai_chat_completions`
from the vLLM wheel on PyPI, run with an aiohttp session as `vllm bench serve` opens it); guidellm
and AIPerf from PyPI (`scripts/peers-env.sh`), each with its own concurrency option. The
environment is `.peers-venv`, never a CI dependency.

"""
    text = head + "\n".join(lines) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        with open(a.out, "w") as f:
            f.write(text)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
