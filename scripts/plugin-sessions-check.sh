#!/bin/bash
# The pytest plugin's comparison of a session with saved ones, as a user runs it: a project of
# two CPU-bound benchmarked tests (pure Python, about 10 ms a call); SAVED sessions saved into a
# store (--inferbench-save --inferbench-store); then, each compared with the newest saved one
# (--inferbench-compare latest --inferbench-store): an unchanged session, a 10% heavier one, and
# the unchanged one against a single saved session with no store. With BUSY=1 a busy loop runs
# on the other core throughout. Prints each session's exit code and the plugin's verdict line.
#   scripts/plugin-sessions-check.sh BIN [SAVED]     (PYTHON: the interpreter, default .venv/bin/python)
set -euo pipefail
bin=$(realpath "${1:?usage: plugin-sessions-check.sh BIN [SAVED]}"); saved=${2:-10}
py=$(realpath "${PYTHON:-.venv/bin/python}"); src=$(realpath python/src)
work=$(mktemp -d); trap 'kill ${busy:-} 2>/dev/null || true; rm -rf "$work"' EXIT
cat >"$work/test_cpu.py" <<'P'
import os
N = int(os.environ.get("CAL_N", "60000"))
def squares(n):
    return sum(i * i for i in range(n))
def test_squares(inferbench_benchmark):
    assert inferbench_benchmark(squares, N) > 0
def test_squares_half(inferbench_benchmark):
    assert inferbench_benchmark(squares, N // 2) > 0
P
if [ "${BUSY:-0}" = 1 ]; then taskset -c 1 sh -c 'while :; do :; done' & busy=$!; fi
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)$(git diff --quiet || echo -dirty), load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; busy loop: ${BUSY:-0}; $saved saved sessions"
session() { # NAME ENV... -- ARGS...
	local name=$1; shift
	local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
	set +e
	out=$(cd "$work" && env "${envs[@]}" INFERBENCH_BINARY="$bin" PYTHONPATH="$src" PYTEST_ADDOPTS= \
		"$py" -m pytest -q -p no:cacheprovider -p inferbench.pytest_plugin "$@" 2>&1)
	rc=$?
	set -e
	echo "$name: exit $rc; $(grep -m1 -o 'inferbench: \(unknown\|no regression\|.*fails with\).*' <<<"$out" | cut -c1-160)"; [ -n "${VERBOSE:-}" ] && grep -i "latency_ms\|threshold\|limit" <<<"$out" | head -6 || true
}
for i in $(seq "$saved"); do
	(cd "$work" && INFERBENCH_BINARY="$bin" PYTHONPATH="$src" PYTEST_ADDOPTS= "$py" -m pytest -q -p no:cacheprovider -p inferbench.pytest_plugin \
		--inferbench-save "s$i" --inferbench-store h.db >/dev/null 2>&1) || { echo "saving session $i failed"; exit 1; }
done
session "unchanged, against the newest of $saved stored" CAL_N=60000 -- --inferbench-compare latest --inferbench-store h.db
session "10% heavier, against the newest of $saved stored" CAL_N=66000 -- --inferbench-compare latest --inferbench-store h.db
session "unchanged, against one saved session, no store" CAL_N=60000 -- --inferbench-compare benchmark_results/latest
session "10% heavier, against one saved session, no store" CAL_N=66000 -- --inferbench-compare benchmark_results/latest
