"""``stream-doctor serve CAPTURE --matrix [--vary NAME ...] -- COMMAND...``: the application run once per
variant, each against a fresh server, and the table of what it did with each call (``serve.matrix``)."""

from __future__ import annotations

import shutil
from typing import Optional, Sequence

import typer

from stream_doctor.cli.output import emit, error_line, fail
from stream_doctor.cli.serve import TABLES


def matrix_run(
    captures: Sequence[str],
    command: Sequence[str],
    names: Sequence[str],
    seed: int,
    out: Optional[str],
    timeout: float,
    format: str,
    output_file: Optional[str] = None,
) -> None:
    """Run the matrix and print its table (``format``: a name of ``cli/serve.TABLES``, checked as the command line
    was read); exit 1 when a meaning-keeping variant's row fails."""
    if not command:
        fail("--matrix runs an application: give its command after --, e.g. -- python app.py")
    if not captures:
        fail("--matrix needs a CAPTURE before --")
    if shutil.which(command[0]) is None:
        fail(f"--matrix: no command {command[0]!r} found (give a program on PATH or a path to one)")
    try:
        from stream_doctor.serve.matrix import run_matrix
    except ImportError as error:
        from stream_doctor.util.install import install_extra

        fail(f"stream-doctor serve needs the record extra ({error.name}): {install_extra('record')}")
    import tempfile

    from stream_doctor.serve.load import ServeError
    from stream_doctor.serve.variants import KINDS, variant_names

    folder = out if out is not None else tempfile.mkdtemp(prefix="stream-doctor-matrix-")
    chosen = [name for kind in KINDS for name in variant_names(kind) if not names or name in names]
    error_line(f"stream-doctor serve --matrix: {len(chosen)} runs of the application; each run's output in {folder}")
    try:
        rows = run_matrix(captures, command, chosen, seed, folder, timeout)
    except ServeError as error:
        fail(str(error))
    emit(TABLES[format](rows), output_file, quiet=False, inputs=list(captures))
    if any(row.failing for row in rows):
        raise typer.Exit(1)
