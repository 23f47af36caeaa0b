#!/bin/sh
# import-memory.sh: the peak resident memory of `inferbench import` of a large run.json (200,000
# scenarios, 297 MB) into a new SQLite store, as docs/reliability.md reports it.
#   scripts/import-memory.sh [SCENARIOS]
set -eu
n=${1:-200000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$(dirname "$0")/.."
(cd result && INFERBENCH_LARGE_RUN="$tmp/large.json" INFERBENCH_LARGE_RUN_WRITE="$n" go test -count=1 -run TestLargeRunMemory . >/dev/null)
go build -o "$tmp/inferbench" ./cmd/inferbench 2>/dev/null
echo "file: $(wc -c <"$tmp/large.json") bytes, $n scenarios; load average at start: $(cat /proc/loadavg)"
/usr/bin/time -v "$tmp/inferbench" import "$tmp/large.json" --store "$tmp/h.db" 2>&1 |
	grep -E 'imported|Maximum resident|Elapsed'
echo "load average at end: $(cat /proc/loadavg)"
