#!/usr/bin/env bash
# What the gate says of two separate runs of a CPU-bound command: unchanged (A against A) and 10%
# more work (A against S), quiet and then with a busy loop on the other core. Prints each
# comparison's exit code and its latency_ms and cpu_ms rows; every output format is asked for the
# unchanged pair. Usage: scripts/verdict-check.sh [BIN] (default bin/inferbench; make build first).
set -uo pipefail
ib="$(realpath "${1:-bin/inferbench}")"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cd "$dir"
printf 'import sys\ns = 0\nfor i in range(int(sys.argv[1])):\n    s += i * i\n' >work.py
run() { "$ib" run --exec "python3 work.py $1" --name w --iterations 20 --warmup 2 --no-store --output-dir "$dir/$2" --format none >/dev/null 2>&1; }
judge() {
	for f in text json markdown junit; do "$ib" compare "$1/latest" "$2/latest" --format "$f" >"cmp.$f" 2>&1; echo "  $3 --format $f: exit $?"; done
	grep -E "^ +(latency_ms|cpu_ms) " cmp.text | cut -c1-100
}
for cond in quiet loaded; do
	bl=
	if [ $cond = loaded ]; then (while :; do :; done) & bl=$!; fi
	echo "$cond (load average $(cut -d' ' -f1-3 /proc/loadavg))"
	run 400000 a$cond; run 400000 b$cond; run 440000 s$cond
	judge a$cond b$cond unchanged
	judge b$cond s$cond "10% more work"
	[ -n "$bl" ] && kill "$bl"
done
