#!/usr/bin/env bash
# Agreement bar (docs/performance.md, "Workers"): inferbench's p50 for resnet18 at batch 1 on CPU
# against a plain PyTorch timing loop, in alternating rounds so that drift in the machine's load
# hits both alike. Prints one line per round and the median ratio.
#
#   benchmarks/scripts/worker_agreement.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-5}
py=${INFERBENCH_PYTHON:-/usr/bin/python3}
go build -o bin/inferbench ./cmd/inferbench
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ratios=()
plain() { "$py" benchmarks/scripts/plain_torch_loop.py --iterations 30 --warmup 5; }
inferbench() {
	./bin/inferbench run benches/performance/vision.yaml --include resnet18-cpu --format none \
		--output-dir "$out" >/dev/null 2>&1
	"$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.4f" % r["scenarios"][0]["metrics"]["latency_ms"]["summary"]["median"])' "$out/latest/run.json"
}
for i in $(seq "$rounds"); do
	# alternate which goes first, so that a trend in the machine's load favours neither
	if ((i % 2)); then plain=$(plain); ib=$(inferbench); else ib=$(inferbench); plain=$(plain); fi
	ratio=$("$py" -c "print('%.4f' % ($ib / $plain))")
	ratios+=("$ratio")
	echo "round $i: plain loop p50 ${plain} ms, inferbench p50 ${ib} ms, ratio ${ratio}"
done
"$py" -c "import statistics,sys; r=[float(x) for x in sys.argv[1:]]; print('median ratio %.4f (%+.1f%%), min %.4f, max %.4f' % (statistics.median(r), (statistics.median(r)-1)*100, min(r), max(r)))" "${ratios[@]}"
