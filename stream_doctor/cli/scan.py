"""``stream-doctor scan``: a dataset of logged streams on Dask (the ``scan`` extra). Its options are the
fields of ``Scan`` (typer reads each field's ``Annotated`` declaration, ``typer_app.command``); the work is
``scan_run.run``.

No ``from __future__ import annotations``, as in ``cli/replay.py``: typer reads the annotations.
"""

from typing import Annotated, List, NamedTuple, Optional

import typer

from stream_doctor.cli.shared_options import Container, Ignore, Provider, Select, Severity, fail_on_option


class Scan(NamedTuple):
    """Scan a dataset of logged streams on Dask: findings as Parquet, a status per capture, a summary."""

    inputs: Annotated[
        List[str],
        typer.Argument(
            metavar="INPUT...",
            help="Folders, files, globs or fsspec URLs (memory://, s3://, gcs:// … as installed); "
            "with --body-column, tables (Parquet, or JSONL with one capture per row).",
        ),
    ]
    out: Annotated[
        str, typer.Option("--out", "-o", metavar="PATH", help="Findings table (Parquet), one row per finding.")
    ] = "scan-findings.parquet"
    status: Annotated[
        Optional[str],
        typer.Option(
            "--status",
            metavar="PATH",
            help="Per-capture status table (Parquet; default: beside --out, *.status.parquet).",
        ),
    ] = None
    summary: Annotated[
        List[str],
        typer.Option(
            "--summary",
            metavar="PATH",
            help="Write the summary to PATH too: Markdown (.md) or JSON (.json); repeatable.",
        ),
    ] = []
    body_column: Annotated[
        Optional[str],
        typer.Option(
            "--body-column", metavar="COLUMN", help="The inputs are tables; this column holds each raw streamed body."
        ),
    ] = None
    id_column: Annotated[
        Optional[str], typer.Option("--id-column", metavar="COLUMN", help="Table column with the request id.")
    ] = None
    model_column: Annotated[
        Optional[str],
        typer.Option(
            "--model-column", metavar="COLUMN", help="Table column with the model (when the stream does not name it)."
        ),
    ] = None
    meta_column: Annotated[
        List[str],
        typer.Option(
            "--meta-column",
            metavar="COLUMN",
            help="Table column carried into every finding and status row (repeatable).",
        ),
    ] = []
    scheduler: Annotated[
        Optional[str],
        typer.Option(
            "--scheduler",
            metavar="ADDRESS",
            help="Address of a running Dask scheduler (tcp://host:8786); default: a local cluster.",
        ),
    ] = None
    workers: Annotated[
        Optional[int], typer.Option("--workers", min=1, metavar="N", help="Worker processes of the local cluster.")
    ] = None
    batch_size: Annotated[
        Optional[int], typer.Option("--batch-size", min=1, metavar="N", help="Captures per task.")
    ] = None
    sample: Annotated[
        Optional[int], typer.Option("--sample", min=1, metavar="N", help="Scan N captures drawn at random.")
    ] = None
    seed: Annotated[int, typer.Option("--seed", metavar="N", help="Seed of --sample.")] = 0
    resume: Annotated[bool, typer.Option("--resume", help="Keep the outputs and scan only the captures they lack.")] = (
        False
    )
    provider: Provider = None
    container: Container = None
    select: Select = []
    ignore: Ignore = []
    fail_on: Annotated[
        Optional[Severity], fail_on_option("when a finding reaches this severity", "a scan never fails")
    ] = None
    width: Annotated[
        Optional[int], typer.Option("--width", min=1, metavar="COLUMNS", help="Terminal width for the summary.")
    ] = None
    color: Annotated[Optional[bool], typer.Option("--color/--no-color", help="Force colour on or off.")] = None
