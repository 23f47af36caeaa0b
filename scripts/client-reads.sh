#!/bin/bash
# How late the client reads a stream's tokens, and what a token costs it: `make peers`' accuracy
# run for inferbench alone (the mockserver on CPU 0 with a TTFT of uniform(10,30) ms and 10 ms
# between 32 tokens; the client on CPU 1), N requests at concurrency C, R runs. For each run: the
# read_delay_ms p99 of run.json, the per-request read delay (the request log's read_delay_us) of
# the first C requests (started together) and of the rest, the client's CPU per content event
# (user + system time of the whole process over C × 32 + … events) and its collections.
#   scripts/client-reads.sh BIN [C] [N] [R]
# CLIENT_ENV (e.g. 'GOMAXPROCS=2 GOGC=off') is set for the client only.
set -euo pipefail
bin=$(realpath "${1:?usage: client-reads.sh BIN [C] [N] [R]}"); c=${2:-256}; n=${3:-1000}; runs=${4:-5}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)$(git diff --quiet || echo -dirty), load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; c=$c, $n requests; client environment: ${CLIENT_ENV:-none}"
for r in $(seq "$runs"); do
	port=$((19100 + r)); d="$work/$r"; mkdir -p "$d"
	taskset -c 0 "$bin" mockserver --addr "127.0.0.1:$port" --shape vllm --ttft-ms 'uniform(10,30)' --itl-ms 10 --output-tokens 32 >/dev/null 2>&1 &
	srv=$!
	for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/debug/stats" >/dev/null && break; sleep 0.1; done
	cat >"$d/reads.yaml" <<Y
name: reads
subject: {kind: openai, url: "http://127.0.0.1:$port/v1", model: mock, metrics_url: none,
  workload: {input_tokens: 32, output_tokens: 32}}
load: {mode: concurrency, concurrency: $c, warmup_iterations: 0, measurement_iterations: $n}
Y
	(cd "$d" && env ${CLIENT_ENV:-} GODEBUG=gctrace=1 /usr/bin/time -f '%U %S' -o cpu.txt taskset -c 1 "$bin" run reads.yaml --no-store --output-dir out --format none 2>gc.txt)
	kill "$srv"; wait "$srv" 2>/dev/null || true
	python3 - "$d" "$c" <<'P'
import glob, json, sys
d, c = sys.argv[1], int(sys.argv[2])
sc = json.load(open(glob.glob(d + "/out/*/run.json")[0]))["scenarios"][0]
reqs = sorted((json.loads(l) for l in open(glob.glob(d + "/out/*/requests/*.jsonl")[0])), key=lambda x: x["start_ns"])
q = lambda a, p: sorted(a)[min(len(a) - 1, int(p * len(a)))] / 1000
first, rest = [x.get("read_delay_us", 0) for x in reqs[:c]], [x.get("read_delay_us", 0) for x in reqs[c:]]
events = sum(len(x.get("token_us", [])) for x in reqs)
user, sys_ = map(float, open(d + "/cpu.txt").read().split())
gcs = sum(1 for l in open(d + "/gc.txt") if l.startswith("gc "))
rd = sc["metrics"]["read_delay_ms"]["summary"]["p99"]
print(f"read delay p99 {rd:.1f} ms; first {c}: p50 {q(first, .5):.2f} p90 {q(first, .9):.2f} ms; rest: p50 {q(rest, .5):.2f} p90 {q(rest, .9):.2f} p99 {q(rest, .99):.2f} ms; "
      f"CPU {1e6 * (user + sys_) / events:.1f} µs per event ({user:.2f} s user, {sys_:.2f} s system, {events} events); {gcs} collections; client_bound {bool(sc.get('extra', {}).get('client_bound'))}")
P
done
