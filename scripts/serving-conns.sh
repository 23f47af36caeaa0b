#!/bin/bash
# Connections a serving client opens and closes against the mockserver, read from the server's
# /debug/stats while the run is in progress (docs/serving.md, "The client").
#
#   scripts/serving-conns.sh BIN CONCURRENCY REQUESTS PORT
#
# BIN is an inferbench binary (go build -o /tmp/ib ./cmd/inferbench). The mockserver is BIN's own.
# Each /debug/stats sample is a connection of its own: they are subtracted. The last sample kept is
# the last one taken with more than 200 requests to go, so connections closed when the client
# exits are not counted. The client's metrics scrape (one connection a second) is counted.
set -euo pipefail
bin=$1 c=$2 n=$3 port=$4
"$bin" mockserver --addr 127.0.0.1:"$port" --output-tokens 16 --itl-ms 0.2 >/dev/null 2>&1 &
ms=$!
trap 'kill $ms 2>/dev/null || true' EXIT
sleep 1
out=$(mktemp -d)
"$bin" run --openai http://127.0.0.1:"$port"/v1 --model mock --concurrency "$c" --requests "$n" \
	--no-store --no-request-log --output-dir "$out" >"$out/run.txt" 2>&1 &
cl=$!
last="" k=0 lastk=0
while kill -0 $cl 2>/dev/null; do
	s=$(curl -s http://127.0.0.1:"$port"/debug/stats)
	k=$((k + 1))
	done_=$(echo "$s" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Completed"])' 2>/dev/null || echo 0)
	if [ "$done_" -lt $((n - 200)) ]; then last=$s lastk=$k; fi
	sleep 0.2
done
rc=0
wait $cl || rc=$?
echo "$last" | python3 -c "
import json, sys
d = json.load(sys.stdin)
print('c=$c n=$n rc=$rc: at %d requests completed, %d connections opened by the client, %d closed mid-run'
      % (d['Completed'], d['Connections'] - $lastk, d['Closed'] - ($lastk - 1)))"
