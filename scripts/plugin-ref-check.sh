#!/usr/bin/env bash
# One look at `pytest --inferbench-baseline-ref` as a user runs it: a git repository of one
# benchmarked pure-Python test (a sum of 200,000 squares a call), its working tree unchanged and
# then 10% heavier, each session against HEAD; quiet, then with a busy loop on another core.
# Prints each session's exit code, the plugin's last line and its seconds, and the load average.
#   scripts/plugin-ref-check.sh [BIN]   (PYTHON: the interpreter with pytest, default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-bin/inferbench}")
py=$(realpath "${PYTHON:-.venv/bin/python}")
src=$PWD/python/src
commit=$(git rev-parse --short HEAD)$(git diff --quiet || echo -dirty)
repo=$(mktemp -d)
busy=""
trap 'rm -rf "$repo"; [ -n "$busy" ] && kill "$busy" 2>/dev/null || true' EXIT
cd "$repo" && git init -q
printf 'N = 200000\n\n\ndef squares(n):\n    s = 0\n    for i in range(n):\n        s += i * i\n    return s\n\n\ndef test_squares(benchmark):\n    assert benchmark(squares, N) > 0\n' >test_work.py
git -c user.name=check -c user.email=check@example.com add -A
git -c user.name=check -c user.email=check@example.com commit -qm base
echo "# $(date -u "+%Y-%m-%d %H:%M UTC"), commit $commit"
one() { # label, N
	sed -i "s/^N = .*/N = $2/" test_work.py
	local t0=$SECONDS code=0 out
	out=$(INFERBENCH_BINARY=$bin PYTHONPATH=$src "$py" -m pytest -q -p no:cacheprovider -p inferbench.pytest_plugin --inferbench-baseline-ref HEAD 2>&1) || code=$?
	echo "$1: exit $code, $(grep '^inferbench:' <<<"$out" | tail -1), $((SECONDS - t0)) s"
}
echo "quiet: load average $(cut -d' ' -f1-3 /proc/loadavg)"
one "unchanged" 200000
one "10% heavier" 220000
sh -c 'while :; do :; done' & busy=$!
sleep 2
echo "busy loop: load average $(cut -d' ' -f1-3 /proc/loadavg)"
one "unchanged" 200000
one "10% heavier" 220000
