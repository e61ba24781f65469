"""How a child process ended, in the words every message about one uses (check's workers, the client
libraries run in their own process, Node)."""

from __future__ import annotations

import signal


def how_it_ended(exitcode: int | None) -> str:
    """``exit code 3``, or ``killed by SIGSEGV`` for a process a signal ended (``SIGKILL``: likely the memory
    bound, which the kernel enforces with it)."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"killed by {name}" + (", likely out of memory" if name == "SIGKILL" else "")
    return f"exit code {exitcode}"
