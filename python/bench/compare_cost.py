#!/usr/bin/env python3
"""compare_cost: what --inferbench-save and --inferbench-compare cost after the tests of a 3-test
session, and how big a saved session is (docs/python.md, "Fast and small").

The session is gate_rates.py's three tests (a ~350 us loop, a ~100 ns expression, a pedantic
~40 us loop) with the plugin's defaults. It is saved once, then compared with its saved run
-n times; the plugin prints how long writing the run and comparing took ("N benchmark(s) compared
in S s"), which is what this reports, with the session's whole wall time and the saved folder's
size.

    python3 python/bench/compare_cost.py -n 5
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gate_rates import PROJECT, session  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=5, help="comparisons")
    a = ap.parse_args()
    load0 = open("/proc/loadavg").read().split()[:3]
    with tempfile.TemporaryDirectory(prefix="compare-cost-") as tmp:
        project = Path(tmp)
        (project / "test_gate.py").write_text(PROJECT)
        rc, wall, out = session(project, ["--inferbench-save", "base"])
        if rc != 0:
            print(out, file=sys.stderr)
            return 1
        saved = float(re.search(r"saved in ([0-9.]+) s", out).group(1))
        folder = (project / "benchmark_results" / "latest").resolve()
        files = {f.name: f.stat().st_size for f in folder.iterdir()}
        plugin, walls = [], []
        for _ in range(a.n):
            rc, wall, out = session(project, ["--inferbench-compare", str(folder)])
            m = re.search(r"compared in ([0-9.]+) s", out)
            if rc not in (0, 3) or not m:
                print(out, file=sys.stderr)
                return 1
            plugin.append(float(m.group(1)))
            walls.append(wall)
    load1 = open("/proc/loadavg").read().split()[:3]
    res = {"save_s": saved, "compare_s": plugin, "compare_s_median": statistics.median(plugin), "compare_s_max": max(plugin),
           "session_wall_s_median": statistics.median(walls), "saved_files": files, "saved_bytes": sum(files.values()),
           "loadavg_start": load0, "loadavg_end": load1}
    print(f"save: {saved:.2f} s; compare: median {res['compare_s_median']:.2f} s, max {max(plugin):.2f} s over {a.n} "
          f"(whole session {res['session_wall_s_median']:.1f} s); saved folder {sum(files.values())} bytes {files}; "
          f"load average {' '.join(load0)} -> {' '.join(load1)}")
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
