"""The ``stream-doctor`` executable's entry point: answers ``--version`` before importing the CLI.

``stream-doctor --version`` is asked by editors, pre-commit and bug reports many times a day;
it should cost no more than starting Python. Everything else goes to ``cli.main`` (typer).
"""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:] in (["--version"], ["-V"]):
        from stream_doctor import __version__

        sys.stdout.write(f"stream-doctor {__version__}\n")
        return
    from stream_doctor.cli import main as run

    run()
