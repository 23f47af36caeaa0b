"""Sends an inferbench run to Weights & Biases with the user's own wandb package.

Run by inferbench (internal/tracker/wandb.go) as `python -c <this file>`: the payload (a JSON
tracker.Payload plus "project", "entity" and "results") on stdin; a JSON line per W&B run made
on stdout ({"scenario", "id", "dir", "url"}; dir is the run's local folder); wandb's own messages on stderr. One W&B run per
scenario, grouped by the inferbench run id: config = params and the run's tags, summary =
metrics, the time slices logged as steps, the run folder's files saved with each run.
WANDB_PROJECT, WANDB_ENTITY, WANDB_MODE, WANDB_DIR, WANDB_API_KEY are wandb's to read.
Exit status 3: the wandb module is not importable.
"""

import json
import os
import sys

out = sys.stdout
sys.stdout = sys.stderr  # wandb prints: keep stdout to the JSON lines
try:
    import wandb
except ImportError as e:
    print("import wandb: %s" % e, file=sys.stderr)
    sys.exit(3)

p = json.load(sys.stdin)
project = p.get("project") or os.environ.get("WANDB_PROJECT") or "inferbench"
entity = p.get("entity") or os.environ.get("WANDB_ENTITY") or None


def cut(s, n=64):
    # W&B refuses a job type or tag longer than 64 characters.
    return s if len(s) <= n else s[: n - 3] + "..."


for s in p["scenarios"]:
    config = dict(s.get("params") or {})
    for k, v in (p.get("tags") or {}).items():
        config.setdefault(k, v)
    tags = ["inferbench", s["status"]] + list(s.get("tags") or [])
    run = wandb.init(
        project=project,
        entity=entity,
        name="%s %s" % (p["run_id"], s["id"]),
        group=p["run_id"],
        job_type=cut(s["id"]),
        config=config,
        tags=[cut(t) for t in dict.fromkeys(tags) if t],
    )
    for step in s.get("steps") or []:
        run.log(step["metrics"], step=step["step"])
    run.summary.update(s.get("metrics") or {})
    for a in p.get("artifacts") or []:
        run.save(a["path"], base_path=os.path.dirname(a["path"]), policy="now")
    # run.dir is the run's files/ folder; its parent is the run's folder (offline-run-...).
    info = {"scenario": s["id"], "id": run.id, "dir": os.path.dirname(run.dir), "url": run.url or ""}
    run.finish(exit_code=1 if s["status"] == "failed" else 0)
    out.write(json.dumps(info) + "\n")
    out.flush()
