#!/usr/bin/env bash
# Checks that the exec subject agrees with an independent tool: the median of `sleep 0.05` as
# measured by inferbench and by hyperfine (no shell, same warm-up and runs). Prints both medians
# and the difference; exits 1 when they differ by more than 5%.
#
#   scripts/agree-hyperfine.sh [COMMAND] [RUNS]
set -euo pipefail
cmd=${1:-sleep 0.05}
runs=${2:-40}
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "hyperfine is not installed (apt-get install hyperfine)" >&2; exit 2; }
go build -o bin/inferbench ./cmd/inferbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hyperfine -N --warmup 3 --runs "$runs" --export-json "$tmp/hf.json" "$cmd" >/dev/null
CI=1 bin/inferbench run --exec "$cmd" --warmup 3 --iterations "$runs" --output-dir "$tmp/ib" --format json >"$tmp/ib.json" 2>/dev/null
python3 - "$tmp/hf.json" "$tmp/ib.json" <<'PY'
import json, sys
hf = json.load(open(sys.argv[1]))["results"][0]["median"] * 1e3
ib = json.load(open(sys.argv[2]))["scenarios"][0]["metrics"]["latency_ms"]["summary"]["median"]
diff = (ib - hf) / hf * 100
print(f"hyperfine median {hf:.3f} ms, inferbench median {ib:.3f} ms, difference {diff:+.2f}%")
sys.exit(0 if abs(diff) <= 5 else 1)
PY
