#!/usr/bin/env bash
# One look at the paired path's verdicts (run --baseline-ref) on this machine: an unchanged
# CPU-bound command (awk summing 600,000 integers) against itself in text and JSON output, and
# the same command doing 10% more work, quiet, then both again with a busy loop on another core.
# Prints each run's exit code, answer, change and seconds, and the load average.
#
#   scripts/paired-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/inferbench ./cmd/inferbench
ib=$PWD/bin/inferbench
repo=$(mktemp -d)
busy=""
trap 'rm -rf "$repo"; [ -n "$busy" ] && kill "$busy" 2>/dev/null || true' EXIT
cd "$repo" && mkdir benches && git init -q && printf '/results/\n' >.gitignore
printf 'name: sum\nsubject: {kind: exec, command: ["awk", "BEGIN { for (i = 0; i < 600000; i++) s += i }"]}\n' >benches/sum.yaml
g() { git -c user.name=check -c user.email=check@example.com "$@"; }
g add -A && g commit -qm base && g tag base
sed -i 's/600000/660000/' benches/sum.yaml && g commit -qam slow && g tag slow
one() { # label, tag, format
	git checkout -q "$2"
	t0=$(date +%s)
	set +e
	"$ib" run --baseline-ref base --no-store --no-html-report --format "$3" --output-dir results >/dev/null 2>&1
	code=$?
	set -e
	ans=$(python3 -c "import json;r=json.load(open('results/latest/run.json'));s=r['scenarios'][0]['extra']['baseline_ref'];x=s.get('cpu_ab') or s['ab'];print(x['answer'], '%+.1f%%' % (100*(x['ratio']-1)))")
	echo "$1: $2 against base, --format $3: exit $code, $ans, $(($(date +%s) - t0)) s"
}
echo "quiet: load average $(cut -d' ' -f1-3 /proc/loadavg)"
one unchanged base text
one unchanged base json
one "10% slower" slow table
(while :; do :; done) &
busy=$!
echo "busy loop: load average $(cut -d' ' -f1-3 /proc/loadavg)"
one unchanged base none
one "10% slower" slow table
echo "end: load average $(cut -d' ' -f1-3 /proc/loadavg)"
