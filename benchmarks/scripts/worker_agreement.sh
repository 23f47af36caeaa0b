#!/usr/bin/env bash
# Agreement bar (docs/performance.md, "Workers"): inferbench's p50 for resnet18 at batch 1 on CPU
# against a plain PyTorch timing loop, in alternating rounds so that drift in the machine's load
# hits both alike. Both run pinned to one CPU at raised priority (PIN, NICE; as root) so that other
# work on a shared machine disturbs them less. Prints one line per round and the median ratio.
#
#   benchmarks/scripts/worker_agreement.sh [ROUNDS]
#   PIN= NICE= benchmarks/scripts/worker_agreement.sh   # neither pinned nor reprioritised
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-5}
py=${INFERBENCH_PYTHON:-/usr/bin/python3}
iters=${ITERATIONS:-60}
wrap=()
if [ -n "${PIN-1}" ] && command -v taskset >/dev/null; then wrap+=(taskset -c "${PIN:-1}"); fi
if [ -n "${NICE--15}" ] && [ "$(id -u)" = 0 ]; then wrap+=(nice -n "${NICE:--15}"); fi
go build -o bin/inferbench ./cmd/inferbench
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ratios=() plains=() ibs=()
plain() { "${wrap[@]}" "$py" benchmarks/scripts/plain_torch_loop.py --iterations "$iters" --warmup 5; }
inferbench() {
	"${wrap[@]}" ./bin/inferbench run benches/performance/vision.yaml --include resnet18-cpu --format none \
		--iterations "$iters" --warmup 5 --output-dir "$out" >/dev/null 2>&1
	"$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.4f" % r["scenarios"][0]["metrics"]["latency_ms"]["summary"]["median"])' "$out/latest/run.json"
}
for i in $(seq "$rounds"); do
	# alternate which goes first, so that a trend in the machine's load favours neither
	if ((i % 2)); then plain=$(plain); ib=$(inferbench); else ib=$(inferbench); plain=$(plain); fi
	ratio=$("$py" -c "print('%.4f' % ($ib / $plain))")
	ratios+=("$ratio")
	plains+=("$plain")
	ibs+=("$ib")
	echo "round $i: plain loop p50 ${plain} ms, inferbench p50 ${ib} ms, ratio ${ratio}"
done
# Two summaries: the median of the per-round ratios, and the ratio of each tool's best round (the
# least disturbed one; on a shared VM whole runs land in a fast or a slow state).
"$py" -c "
import statistics, sys
n = len(sys.argv) // 3
r, p, b = ([float(x) for x in sys.argv[1 + i * n:1 + (i + 1) * n]] for i in range(3))
m = statistics.median(r)
print('median ratio %.4f (%+.1f%%), min %.4f, max %.4f' % (m, (m - 1) * 100, min(r), max(r)))
print('best rounds: plain loop %.4f ms, inferbench %.4f ms, ratio %.4f (%+.1f%%)' % (min(p), min(b), min(b) / min(p), (min(b) / min(p) - 1) * 100))
" "${ratios[@]}" "${plains[@]}" "${ibs[@]}"
