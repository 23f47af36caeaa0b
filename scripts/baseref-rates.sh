#!/usr/bin/env bash
# Measures `inferbench run --baseline-ref` at its defaults on this machine: how often an unchanged
# CPU-bound command is called slower (a false failure, exit 3), and how often the same command
# made 5% and 10% slower is found. A temporary git repository holds four commits of one command
# benchmark (awk summing N integers, ~40 ms): base, same (a comment changed: the code is
# unchanged), slow5 (1.05 N) and slow10 (1.1 N). Each round checks out same, slow5 and slow10 in
# turn and runs each against base, interleaved, at the defaults (sequential, threshold 3%, 2
# minutes a scenario at most). Prints each run's answer and seconds, the rates, and the load
# average at the start and the end. With BUSY=1 a busy loop runs on another core throughout.
#
#   nice scripts/baseref-rates.sh [ROUNDS]    (default 10)
set -euo pipefail
k=${1:-10}
cd "$(dirname "$0")/.."
go build -o bin/inferbench ./cmd/inferbench
ib=$PWD/bin/inferbench
tmp=$(mktemp -d)
busy=""
trap 'rm -rf "$tmp"; [ -n "$busy" ] && kill "$busy" 2>/dev/null || true' EXIT
if [ "${BUSY:-0}" = 1 ]; then
	(while :; do :; done) &
	busy=$!
fi
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
bench 630000 "5% more work" && git commit -qam slow5 && git tag slow5
git checkout -q base
bench 660000 "10% more work" && git commit -qam slow10 && git tag slow10

echo "start: $(date -u +%FT%TZ) loadavg $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores, busy loop: ${BUSY:-0}); $k rounds"
results=$tmp/results.tsv
for i in $(seq 1 "$k"); do
	for kind in same slow5 slow10; do
		git checkout -q "$kind"
		t0=$(date +%s.%N)
		set +e
		(cd "$repo" && CI=1 "$ib" run --baseline-ref base --no-store --no-html-report --format none --output-dir "$tmp/out" 2>"$tmp/err")
		code=$?
		set -e
		t1=$(date +%s.%N)
		if [ "$code" -ne 0 ] && [ "$code" -ne 3 ]; then cat "$tmp/err" >&2; exit 1; fi
		python3 - "$kind" "$code" "$t0" "$t1" "$tmp/out/latest/run.json" >>"$results" <<'PY'
import json, sys
run = json.load(open(sys.argv[5]))
sec = json.loads(json.dumps(run["scenarios"][0]["extra"]["baseline_ref"]))
res = sec.get("cpu_ab") or sec["ab"]
print(sys.argv[1], sys.argv[2], res["answer"], res["pairs"], f'{100 * (res["ratio"] - 1):.2f}', f'{float(sys.argv[4]) - float(sys.argv[3]):.1f}', sep="\t")
PY
		tail -n 1 "$results"
	done
done
echo "end:   $(date -u +%FT%TZ) loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import sys, statistics
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
for kind, what in (("same", "unchanged"), ("slow5", "5% slower"), ("slow10", "10% slower")):
    rs = [r for r in rows if r[0] == kind]
    answers = {a: sum(1 for r in rs if r[2] == a) for a in ("slower", "same", "faster", "unknown")}
    secs = [float(r[5]) for r in rs]
    print(f"{what:11s} exit 3 in {sum(r[1] == '3' for r in rs)}/{len(rs)}; answers {answers}; "
          f"median {statistics.median(secs):.0f} s a verdict, change median {statistics.median(float(r[4]) for r in rs):+.1f}%")
PY
