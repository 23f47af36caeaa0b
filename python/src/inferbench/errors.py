"""Errors of the commands the package runs, with the command's message and exit code."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inferbench.results import Comparison, Run

# The command line's exit codes (inferbench run --help).
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_REGRESSION = 0, 1, 2, 3


class InferbenchError(Exception):
    """InferbenchError: an inferbench command exited non-zero.

    message is the command's own (its last stderr lines), exit_code its exit status (1 an error or
    a failed scenario, 2 bad flags or definitions, 3 a regression or an exceeded budget), args_
    the arguments it ran with, and run the run it wrote before failing, when it wrote one.
    """

    def __init__(self, message: str, exit_code: int, args: list[str], stderr: str = "", run: Run | None = None) -> None:
        where = "" if message.startswith("inferbench") else f"inferbench {args[0] if args else ''}: "
        super().__init__(f"{where}{message} (exit {exit_code})")
        self.message = message
        self.exit_code = exit_code
        self.args_ = args
        self.stderr = stderr
        self.run = run


class UsageError(InferbenchError):
    """UsageError: bad options or definitions (exit code 2)."""


class RegressionError(InferbenchError):
    """RegressionError: the run regressed against its baseline or exceeded a budget (exit code 3).

    comparison is the verdict when one was made.
    """

    comparison: Comparison | None = None


def message_of(stderr: str) -> str:
    """message_of returns the command's error from its stderr: its last lines that say something."""
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    errs = [ln for ln in lines if ln.startswith(("inferbench:", "error", "Error"))]
    pick = [ln.removeprefix("inferbench: ") for ln in (errs[-3:] if errs else lines[-3:])]
    return "; ".join(pick) or "no message"


def error_for(exit_code: int, args: list[str], stderr: str, run: Run | None = None) -> InferbenchError:
    """error_for returns the exception for a command that exited with exit_code."""
    cls = {EXIT_USAGE: UsageError, EXIT_REGRESSION: RegressionError}.get(exit_code, InferbenchError)
    return cls(message_of(stderr), exit_code, args, stderr, run)
