#!/usr/bin/env bash
# Measures `inferbench run --baseline-ref` on this machine: how often an unchanged CPU-bound
# command fails the gate (false failures) and how often the same command made 10% slower is
# found (detection). A temporary git repository holds three commits of one command benchmark
# (awk summing N integers, ~40 ms): base, same (a comment changed: the code is unchanged) and
# slow (1.1 N). Each comparison checks out `same` or `slow` and runs it against `base`
# interleaved; the two kinds alternate so that the machine's state falls on both alike. The
# verdict is the exit code of the run with --threshold latency=5 (cpu_ms, where the command's CPU
# time is recorded, counts as latency), and the same verdict recomputed from compare.json at the
# default 15%. For contrast, each round also measures `base` and `same` as two separate runs, one
# after the other, and judges them with `inferbench compare` at the same two thresholds (the
# before/after a stored baseline gives). Prints the load average at the start and the end.
#
#   nice scripts/baseref-rates.sh [COMPARISONS_EACH] [ITERATIONS]    (default 20 and 30)
set -euo pipefail
k=${1:-20}
iters=${2:-30}
cd "$(dirname "$0")/.."
go build -o bin/inferbench ./cmd/inferbench
ib=$PWD/bin/inferbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repo=$tmp/repo
mkdir -p "$repo/benches"
git() { command git -C "$repo" -c user.name=rates -c user.email=rates@example.com "$@"; }
bench() { # $1: N, $2: a comment
	cat >"$repo/benches/sum.yaml" <<YAML
# $2
name: sum
subject:
  kind: exec
  command: ["awk", "BEGIN { for (i = 0; i < $1; i++) s += i }"]
YAML
}
git init -q
bench 600000 base && git add -A && git commit -qm base && git tag base
bench 600000 "same code, another commit" && git commit -qam same && git tag same
git checkout -q base
bench 660000 "10% more work" && git commit -qam slow && git tag slow

echo "start: $(date -u +%FT%TZ) loadavg $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores); $k comparisons each, --iterations $iters"
results=$tmp/results.tsv
for i in $(seq 1 "$k"); do
	for kind in same slow; do
		git checkout -q "$kind"
		set +e
		(cd "$repo" && CI=1 "$ib" run --baseline-ref base --iterations "$iters" --threshold latency=5 \
			--no-store --no-html-report --format none --output-dir "$tmp/out" 2>"$tmp/err")
		code=$?
		set -e
		if [ "$code" -ne 0 ] && [ "$code" -ne 3 ]; then cat "$tmp/err" >&2; exit 1; fi
		python3 - "$kind" "$code" "$tmp/out/latest/compare.json" >>"$results" <<'PY'
# The gate at 5% is the exit code; at 15% it is recomputed from the rows with compare's rules:
# a gated row significant and worse than 15% fails, except a latency_ms regression that a gated
# (CPU-bound) cpu_ms does not confirm.
import json, sys
rep = json.load(open(sys.argv[3]))
rows = {r["metric"]: r for r in rep["rows"]}
def fails(r, th):
    return r is not None and r["gated"] and r["q"] <= rep["alpha"] and r["delta_pct"] > th
lat, cpu = rows.get("latency_ms"), rows.get("cpu_ms")
f15 = fails(cpu, 15) or (fails(lat, 15) and not (cpu is not None and cpu["gated"] and not fails(cpu, 15)))
cpu_delta = f'{cpu["delta_pct"]:.2f}' if cpu else "nan"
print(sys.argv[1], sys.argv[2], f'{lat["delta_pct"]:.2f}', int(sys.argv[2] == "3"), int(f15), cpu_delta, sep="\t")
PY
	done
	# Before/after: two separate runs of unchanged code, compared.
	for side in base same; do
		git checkout -q "$side"
		(cd "$repo" && CI=1 "$ib" run --iterations "$iters" --no-store --no-html-report --format none --output-dir "$tmp/seq-$side" 2>"$tmp/err") ||
			{ cat "$tmp/err" >&2; exit 1; }
	done
	seq=""
	for th in 5 15; do
		set +e
		CI=1 "$ib" compare "$tmp/seq-base/latest" "$tmp/seq-same/latest" --threshold "latency=$th" --format json >"$tmp/seq.json" 2>"$tmp/err"
		code=$?
		set -e
		if [ "$code" -ne 0 ] && [ "$code" -ne 3 ]; then cat "$tmp/err" >&2; exit 1; fi
		seq="$seq\t$((code == 3))"
	done
	printf "sequential\t-\t-%b\n" "$seq" >>"$results"
done
echo "end:   $(date -u +%FT%TZ) loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import sys, statistics
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
for kind, what in (("same", "false failures (unchanged)"), ("slow", "found (10% slower)")):
    rs = [r for r in rows if r[0] == kind]
    d = [float(r[2]) for r in rs]
    c = [float(r[5]) for r in rs if r[5] != "nan"]
    f5, f15 = sum(int(r[3]) for r in rs), sum(int(r[4]) for r in rs)
    print(f"{what:28s} threshold 5%: {f5}/{len(rs)}  default 15%: {f15}/{len(rs)}  "
          f"latency_ms change median {statistics.median(d):+.1f}% (range {min(d):+.1f}% to {max(d):+.1f}%)"
          + (f"; cpu_ms median {statistics.median(c):+.1f}% (range {min(c):+.1f}% to {max(c):+.1f}%)" if c else "; no cpu_ms"))
seq = [r for r in rows if r[0] == "sequential"]
if seq:
    print(f"{'before/after, unchanged':28s} threshold 5%: {sum(int(r[3]) for r in seq)}/{len(seq)}  default 15%: {sum(int(r[4]) for r in seq)}/{len(seq)}  (two separate runs, inferbench compare)")
exit_codes = [r for r in rows if r[0] == "same" and r[1] == "3"]
print(f"exit code 3 on unchanged code: {len(exit_codes)}/{sum(1 for r in rows if r[0] == 'same')}")
PY
