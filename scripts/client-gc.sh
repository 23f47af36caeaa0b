#!/bin/bash
# The client's garbage collector at the peers' ceiling (docs/performance.md, "The client's garbage
# collector"): the run of `make peers`' req/s column (2,000 streamed chat requests of 32 input and
# 32 output tokens at concurrency C against `mockserver --shape vllm --output-tokens 32`, the server
# pinned to CPU 0 and the client to CPU 1), R times with GOGC=100 (Go's default: the client's
# collector before engine.ClientGCPercent) and R times without GOGC (the engine's choice),
# alternately. Prints each run's requests_per_s, then the medians.
#
#   scripts/client-gc.sh BIN [C] [R] [PORT]      (defaults 512, 8, 18790)
set -euo pipefail
bin=$(realpath "$1") c=${2:-512} r=${3:-8} port=${4:-18790}
taskset -c 0 "$bin" mockserver --addr 127.0.0.1:"$port" --shape vllm --output-tokens 32 >/dev/null 2>&1 &
ms=$!
work=$(mktemp -d)
trap 'kill $ms 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do curl -sf http://127.0.0.1:"$port"/debug/stats >/dev/null && break; sleep 0.1; done
cat >"$work/peers.yaml" <<YAML
name: peers
subject: {kind: openai, url: "http://127.0.0.1:$port/v1", model: mock, metrics_url: none,
  workload: {input_tokens: 32, output_tokens: 32}}
load: {mode: concurrency, concurrency: $c, warmup_iterations: 0, measurement_iterations: 2000}
YAML
rps() { # one run under the given environment; prints its requests_per_s
	rm -rf "$work/out"
	(cd "$work" && env "$@" taskset -c 1 "$bin" run peers.yaml --no-store --no-request-log --output-dir out >/dev/null 2>&1)
	python3 -c 'import json,glob,sys; print(round(json.load(open(glob.glob(sys.argv[1]+"/out/2*/run.json")[0]))["scenarios"][0]["metrics"]["requests_per_s"]["value"]))' "$work"
}
old=() new=()
for i in $(seq "$r"); do
	old+=("$(rps GOGC=100)")
	new+=("$(rps -u GOGC)")
	echo "run $i: GOGC=100 ${old[-1]} req/s, engine's ${new[-1]} req/s"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "c=$c median of $r: GOGC=100 $(median "${old[@]}") req/s, engine's $(median "${new[@]}") req/s"
