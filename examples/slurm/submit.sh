#!/usr/bin/env bash
# Submit the shards as a job array and the merge as a job that starts when every shard has ended,
# whether it succeeded or not (afterany): the merge names the shards that failed.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p logs
jid=$(sbatch --parsable shard.sbatch "$@")
jid=${jid%%;*} # --parsable prints "id" or "id;cluster"
mid=$(sbatch --parsable --dependency="afterany:${jid}" --export="ALL,ARRAY_JOB_ID=${jid}" merge.sbatch)
echo "shards: job array ${jid}; merge: job ${mid%%;*} (group slurm-${jid})"
