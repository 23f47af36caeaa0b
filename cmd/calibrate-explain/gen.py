"""gen.py makes calibration profiles on another machine (a GPU machine's idle cores), for
`calibrate-explain -from DIR` to tally: python gen.py KIND N SEED DIR profiles N trials of KIND
(python or torch) through driver.py into DIR/KIND-SEED/: per trial TRIAL-old, TRIAL-new (one
function or operator, chosen with SEED, made 10% costlier) and TRIAL-same, and a line
"TRIAL INJECTED SECONDS" in injects.txt when the trial is done. Run from the repository root with
PYTHONPATH=internal/workers/python; only the chunk files are kept."""

import glob
import json
import os
import random
import subprocess
import sys
import time


def main():
    kind, n, seed, top = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    out = os.path.join(top, "%s-%d" % (kind, seed))
    os.makedirs(out, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    d = subprocess.Popen([sys.executable, os.path.join(here, "driver.py")], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    rng = random.Random(seed)
    t0 = time.time()
    for i in range(n):
        k = rng.randrange(20 if kind == "python" else 12)
        for tag, inj in (("old", -1), ("new", k), ("same", -1)):
            p = "%s/%d-%s" % (out, i, tag)
            d.stdin.write(json.dumps({"kind": kind, "inject": inj, "dir": p, "n": 20}) + "\n")
            d.stdin.flush()
            d.stdout.readline()
            for f in glob.glob(p + "/*"):
                if not f.endswith(".json") or "trace" in f:
                    os.remove(f)
        with open(os.path.join(out, "injects.txt"), "a") as f:
            f.write("%d %d %.1f\n" % (i, k, time.time() - t0))


if __name__ == "__main__":
    main()
