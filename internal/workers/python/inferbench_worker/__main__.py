"""Entry point: ``python -m inferbench_worker`` serves the worker protocol on stdin/stdout.

``python -m inferbench_worker --list FILE.py`` prints the seed-style benchmarks found in FILE as
JSON instead (run_*/benchmark_* functions and classes with setup_model/measure_latency).
"""

import sys

from . import protocol

if __name__ == "__main__":
    sys.exit(protocol.main(sys.argv[1:]))
