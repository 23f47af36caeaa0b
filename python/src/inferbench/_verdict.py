"""What the pytest plugin says of a comparison that neither passes nor fails: the changes two
sessions cannot tell from the machine's state (inferbench compare --between-sessions), in the
plugin's own options."""

from __future__ import annotations

from inferbench.results import Comparison


def unknown_summary(verdict: Comparison, store: str | None) -> str:
    """unknown_summary says why a comparison's unknown changes are not known and what can tell:
    the sessions the store holds of the 10 that learn the machine's noise between sessions (or
    that without a store none accumulate), the baseline ref and instruction mode."""
    sessions = [r["sessions"] for r in verdict.raw.get("rows", []) if r.get("verdict") == "unknown" and r.get("sessions")]
    runs = min((x.get("runs", 0) for x in sessions), default=0)
    need = max((x.get("need", 10) for x in sessions), default=10)
    if store:
        history = (f"{store} holds {runs} of the {need} sessions of the benchmark that learn this machine's noise between sessions: "
                   f"save {max(1, need - runs)} more with --inferbench-save --inferbench-store {store}")
    else:
        history = f"no --inferbench-store: the {need} saved sessions that learn this machine's noise between sessions accumulate only in one (--inferbench-save --inferbench-store PATH)"
    return (f"{verdict.unknown} change(s) beyond the threshold that two sessions cannot tell from the machine's state (the UNKNOWN line above names them); "
            f"{history}; --inferbench-baseline-ref REF measures both sides in one job, and --inferbench-measure instructions counts instructions: either can tell now")
