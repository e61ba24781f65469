"""The ``stream-doctor`` executable's entry point: answers ``--version`` before importing the CLI.

``stream-doctor --version`` is asked by editors, pre-commit and bug reports many times a day;
it should cost no more than starting Python. Every other command line goes to the typer
application (``cli.main``), which imports what a command needs when it runs.
"""

from __future__ import annotations

import sys


def main() -> None:
    argv = sys.argv[1:]
    if argv in (["--version"], ["-V"]):
        from stream_doctor.util.version import __version__

        sys.stdout.write(f"stream-doctor {__version__}\n")
        return
    import gc

    # A command line is one short process: the collector's young-generation passes over what the
    # imports build (typer's and our classes, functions and tables, all kept) find nothing and cost
    # it about 4% of a small replay's start-up (benchmarks/bench_startup.py). Collecting every
    # 100,000 allocations instead still bounds cyclic garbage; a replay's own pause (gcpause) is as it was.
    gc.set_threshold(100_000, *gc.get_threshold()[1:])
    from stream_doctor.cli import main as run

    run()
