#!/bin/sh
# import-memory.sh: the peak resident memory of `inferbench import` of a large run.json (200,000
# scenarios, 297 MB) into a new SQLite store, then of loading the stored run back (`inferbench
# export`, which reads it whole from the store as compare and report do), as docs/measurements/reliability.md
# reports them.
#   scripts/import-memory.sh [SCENARIOS]
# INFERBENCH_BIN=PATH measures that binary (another version) instead of this tree's.
set -eu
n=${1:-200000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$(dirname "$0")/.."
(cd result && INFERBENCH_LARGE_RUN="$tmp/large.json" INFERBENCH_LARGE_RUN_WRITE="$n" go test -count=1 -run TestLargeRunMemory . >/dev/null)
bin=${INFERBENCH_BIN:-}
if [ -z "$bin" ]; then
	bin=$tmp/inferbench
	go build -o "$bin" ./cmd/inferbench 2>/dev/null
fi
size=$(wc -c <"$tmp/large.json")
echo "file: $size bytes, $n scenarios; load average at start: $(cat /proc/loadavg)"
peak() { # the command's peak resident memory in kB, and its ratio to the file
	/usr/bin/time -v "$@" 2>"$tmp/time" >/dev/null || { cat "$tmp/time"; exit 1; }
	kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time")
	wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time")
	echo "peak RSS $kb kB, $(awk -v kb="$kb" -v s="$size" 'BEGIN { printf "%.2f", kb * 1024 / s }') times the file, $wall wall"
}
echo "import: $(peak "$bin" import "$tmp/large.json" --store "$tmp/h.db")"
echo "load (export of the stored run): $(peak "$bin" export large --store "$tmp/h.db")"
echo "load average at end: $(cat /proc/loadavg)"
