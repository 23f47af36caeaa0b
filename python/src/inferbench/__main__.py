"""python -m inferbench: runs the inferbench binary with the same arguments and exit code."""

from __future__ import annotations

import os
import subprocess
import sys

from inferbench._binary import find_binary
from inferbench.errors import BinaryNotFound


def main() -> int:
    try:
        exe = str(find_binary())
    except BinaryNotFound as e:
        print(f"inferbench: {e}", file=sys.stderr)
        return 1
    argv = [exe, *sys.argv[1:]]
    if sys.platform != "win32":
        # The binary replaces this process: signals (Ctrl-C once stops gracefully, twice exits)
        # reach it as if it had been started directly.
        os.execv(exe, argv)
    try:
        return subprocess.call(argv)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
