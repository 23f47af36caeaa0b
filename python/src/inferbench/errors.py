"""The package's exceptions: every failure of the API raises one of them, with what to fix.

    InferbenchError                      base: a command exited non-zero (exit_code 1), or a problem below
    ├── UsageError (also ValueError)     bad options or definitions (exit 2), or a bad argument to the API
    ├── RegressionError                  a regression or an exceeded budget (exit 3)
    ├── BinaryNotFound (also FileNotFoundError)  no usable inferbench binary (binary=, $INFERBENCH_BINARY, PATH)
    ├── CommandTimeout (also TimeoutError)       the command ran past timeout= and was stopped
    └── ResultError (also ValueError)    a file that is not a run.json or a comparison

Each carries the binary's whole message (``message``; for a bad definition every file:line:col
and its hint), which ``str(e)`` shows too; ``stderr`` keeps everything the command wrote there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inferbench.results import Comparison, Run

# The command line's exit codes (inferbench run --help).
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_REGRESSION = 0, 1, 2, 3


class InferbenchError(Exception):
    """InferbenchError: an inferbench command failed, or the API could not run it.

    message is the command's own error, whole (every line of it: a bad definition's
    file:line:col and hint), exit_code its exit status (1 an error or a failed scenario, 2 bad
    flags or definitions, 3 a regression or an exceeded budget; None when the command did not run
    or did not finish), args_ the arguments it ran with, stderr all it wrote there, and run the run
    it wrote before failing, when it wrote one.
    """

    def __init__(self, message: str, exit_code: int | None = None, args: list[str] | None = None, stderr: str = "", run: Run | None = None) -> None:
        args = list(args or [])
        where = "" if message.startswith("inferbench") or not args else f"inferbench {args[0]}: "
        code = "" if exit_code is None else f" (exit {exit_code})"
        super().__init__(f"{where}{message}{code}")
        self.message = message
        self.exit_code = exit_code
        self.args_ = args
        self.stderr = stderr
        self.run = run


class UsageError(InferbenchError, ValueError):
    """UsageError: bad options or definitions (exit code 2), or an argument the API cannot use."""


class RegressionError(InferbenchError):
    """RegressionError: the run regressed against its baseline or exceeded a budget (exit code 3).

    comparison is the verdict when one was made.
    """

    comparison: Comparison | None = None


class BinaryNotFound(InferbenchError, FileNotFoundError):
    """BinaryNotFound: no usable inferbench binary: binary= or $INFERBENCH_BINARY names a file that
    is missing, not executable or not a program for this machine, or none is installed or on PATH."""


class CommandTimeout(InferbenchError, TimeoutError):
    """CommandTimeout: the command ran longer than timeout= seconds and was stopped (its run, if
    any, is partial). stderr holds what it wrote before."""


class ResultError(InferbenchError, ValueError):
    """ResultError: a file that is not what was expected (not a run.json, a damaged comparison)."""


def message_of(stderr: str) -> str:
    """message_of returns the command's error from its stderr, whole: from the last line that starts
    with "inferbench:" (the error main prints) to the end, so a multi-line error (every problem of
    the definitions, with file:line:col and hint) is kept; without such a line, the last lines."""
    lines = [ln.rstrip() for ln in stderr.strip().splitlines() if ln.strip()]
    start = max((i for i, ln in enumerate(lines) if ln.startswith("inferbench:")), default=-1)
    pick = lines[start:] if start >= 0 else lines[-10:]
    if pick:
        pick[0] = pick[0].removeprefix("inferbench: ")
    return "\n".join(pick) or "no message"


def error_for(exit_code: int, args: list[str], stderr: str, run: Run | None = None) -> InferbenchError:
    """error_for returns the exception for a command that exited with exit_code."""
    cls = {EXIT_USAGE: UsageError, EXIT_REGRESSION: RegressionError}.get(exit_code, InferbenchError)
    return cls(message_of(stderr), exit_code, args, stderr, run)
