#!/usr/bin/env bash
# Overhead bar (docs/performance.md, "Workers"): what the worker protocol adds per iteration, with
# the noop adapter, through the whole inferbench run path (measured iterations in batches of 100),
# and per single round trip from the Go benchmark of subject/worker.
#
#   benchmarks/scripts/worker_overhead.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
py=${INFERBENCH_PYTHON:-/usr/bin/python3}
go build -o bin/inferbench ./cmd/inferbench
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
./bin/inferbench run benchmarks/worker-noop.yaml --format none --output-dir "$out" >/dev/null 2>&1
"$py" - "$out/latest/run.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["scenarios"][0]
m = s["metrics"]
lat, har = m["latency_ms"], m["harness_latency_ms"]
def mean(x): return x["summary"]["mean"]
print("inferbench run, noop, %d iterations:" % lat["summary"]["n"])
print("  in-worker latency_ms   mean %.3f us  p50 %.3f us" % (mean(lat) * 1e3, lat["summary"]["median"] * 1e3))
print("  harness_latency_ms     mean %.3f us  p50 %.3f us" % (mean(har) * 1e3, har["summary"]["median"] * 1e3))
print("  protocol per iteration mean %.3f us" % ((mean(har) - mean(lat)) * 1e3))
PY
echo "Go benchmark (one process, round trips of 1 and 100 iterations):"
go test -run '^$' -bench BenchmarkRoundTrip -benchtime 3000x ./subject/worker | grep Benchmark
