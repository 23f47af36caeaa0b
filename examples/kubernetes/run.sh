#!/usr/bin/env bash
# Run the matrix as an Indexed Job, wait until it has finished (completed or failed: a failed
# shard is for the merge to name), then run the merge Job and return its verdict.
set -euo pipefail
cd "$(dirname "$0")"
ns=${NAMESPACE:-default}
kubectl -n "$ns" apply -f secret.yaml
kubectl -n "$ns" apply -f matrix-job.yaml
job=$(kubectl -n "$ns" get -f matrix-job.yaml -o jsonpath='{.metadata.name}')
until [ -n "$(kubectl -n "$ns" get job "$job" -o jsonpath='{.status.conditions[?(@.type=="Complete")].status}{.status.conditions[?(@.type=="Failed")].status}')" ]; do
  sleep 30
done
kubectl -n "$ns" apply -f merge-job.yaml
merge=$(kubectl -n "$ns" get -f merge-job.yaml -o jsonpath='{.metadata.name}')
until [ -n "$(kubectl -n "$ns" get job "$merge" -o jsonpath='{.status.conditions[?(@.type=="Complete")].status}{.status.conditions[?(@.type=="Failed")].status}')" ]; do
  sleep 10
done
kubectl -n "$ns" logs "job/$merge"
[ "$(kubectl -n "$ns" get job "$merge" -o jsonpath='{.status.succeeded}')" = "1" ]
