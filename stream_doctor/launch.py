"""The ``stream-doctor`` executable's entry point: answers ``--version`` before importing the CLI.

``stream-doctor --version`` is asked by editors, pre-commit and bug reports many times a day;
it should cost no more than starting Python. ``--help`` and the common ``replay`` and ``check`` invocations run
through the fast path (``cli/fast.py``: no typer, from a table generated from the typer app);
everything else, and anything the fast path does not understand completely, goes to ``cli.main``
(typer).
"""

from __future__ import annotations

import sys

#: The commands ``cli/fast.py`` may run (its table, ``cli/_fast_argv.py``, says how).
FAST = ("replay", "check")


def main() -> None:
    argv = sys.argv[1:]
    if argv in (["--version"], ["-V"]):
        from stream_doctor import __version__

        sys.stdout.write(f"stream-doctor {__version__}\n")
        return
    if argv in (["--help"], ["-h"]):
        from stream_doctor.cli.fast import help_text

        text = help_text()
        if text is not None:
            sys.stdout.write(text)
            return
    if argv and argv[0] in FAST:
        from stream_doctor.cli.fast import run as fast

        fast(argv)  # exits when it understands argv completely
    from stream_doctor.cli import main as run

    run()
