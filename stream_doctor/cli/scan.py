"""``stream-doctor scan``: a dataset of logged streams on Dask (the ``scan`` extra)."""

from __future__ import annotations

from typing import List, Optional

import typer

from stream_doctor.cli.options import Level
from stream_doctor.cli.output import fail, internal_error, render_options
from stream_doctor.cli.validate import codes


def scan(
    inputs: List[str] = typer.Argument(
        ...,
        metavar="INPUT...",
        help="Folders, files, globs or fsspec URLs (memory://, s3://, gcs:// … as installed); "
        "with --body-column, tables (Parquet, or JSONL with one capture per row).",
    ),
    out: str = typer.Option(
        "scan-findings.parquet", "--out", "-o", metavar="PATH", help="Findings table (Parquet), one row per finding."
    ),
    status: Optional[str] = typer.Option(
        None,
        "--status",
        metavar="PATH",
        help="Per-capture status table (Parquet; default: beside --out, *.status.parquet).",
    ),
    summary: List[str] = typer.Option(
        [],
        "--summary",
        metavar="PATH",
        help="Write the summary to PATH too: Markdown (.md) or JSON (.json); repeatable.",
    ),
    body_column: Optional[str] = typer.Option(
        None, "--body-column", metavar="COLUMN", help="The inputs are tables; this column holds each raw streamed body."
    ),
    id_column: Optional[str] = typer.Option(
        None, "--id-column", metavar="COLUMN", help="Table column with the request id."
    ),
    model_column: Optional[str] = typer.Option(
        None, "--model-column", metavar="COLUMN", help="Table column with the model (when the stream does not name it)."
    ),
    meta_column: List[str] = typer.Option(
        [],
        "--meta-column",
        metavar="COLUMN",
        help="Table column carried into every finding and status row (repeatable).",
    ),
    scheduler: Optional[str] = typer.Option(
        None,
        "--scheduler",
        metavar="ADDRESS",
        help="Address of a running Dask scheduler (tcp://host:8786); default: a local cluster.",
    ),
    workers: Optional[int] = typer.Option(
        None, "--workers", min=1, metavar="N", help="Worker processes of the local cluster."
    ),
    batch_size: Optional[int] = typer.Option(None, "--batch-size", min=1, metavar="N", help="Captures per task."),
    sample: Optional[int] = typer.Option(None, "--sample", min=1, metavar="N", help="Scan N captures drawn at random."),
    seed: int = typer.Option(0, "--seed", metavar="N", help="Seed of --sample."),
    resume: bool = typer.Option(False, "--resume", help="Keep the outputs and scan only the captures they lack."),
    provider: Optional[str] = typer.Option(
        None, "--provider", metavar="NAME", help="Force the provider for every capture."
    ),
    container: Optional[str] = typer.Option(
        None, "--container", metavar="FORMAT", help="Force the capture format for every capture."
    ),
    select: List[str] = typer.Option(
        [], "--select", metavar="CODES", help="Only these rule codes or prefixes (repeatable, or comma-separated)."
    ),
    ignore: List[str] = typer.Option(
        [], "--ignore", metavar="CODES", help="Skip these rule codes or prefixes (repeatable, or comma-separated)."
    ),
    fail_on: Optional[Level] = typer.Option(
        None,
        "--fail-on",
        metavar="SEVERITY",
        help="Exit 1 when a finding reaches this severity: info, warning, error (default: a scan never fails).",
    ),
    width: Optional[int] = typer.Option(
        None, "--width", min=1, metavar="COLUMNS", help="Terminal width for the summary."
    ),
    color: Optional[bool] = typer.Option(None, "--color/--no-color", help="Force colour on or off."),
) -> None:
    """Scan a dataset of logged streams on Dask: findings as Parquet, a status per capture, a summary."""
    from stream_doctor.findings import Severity
    from stream_doctor.scan import ScanError
    from stream_doctor.scan.options import ScanOptions

    for path in summary:
        if not path.endswith((".md", ".json")):
            fail(f"--summary {path}: name a .md (Markdown) or .json file")
    options = ScanOptions(
        inputs=tuple(inputs),
        out=out,
        status=status,
        summaries=tuple(summary),
        body_column=body_column,
        id_column=id_column,
        model_column=model_column,
        meta_columns=tuple(meta_column),
        scheduler=scheduler,
        workers=workers,
        batch_size=batch_size,
        sample=sample,
        seed=seed,
        resume=resume,
        provider=provider,
        container=container,
        select=codes(select),
        ignore=codes(ignore),
        fail_on=Severity.parse(fail_on.value) if fail_on else None,
    )
    try:
        from stream_doctor.scan.cli import run_scan

        code = run_scan(options, render_options(width, color))
    except ScanError as error:
        fail(str(error))
    except Exception as error:  # noqa: BLE001 - a bug of ours must still not print a traceback
        internal_error(error, "scan")
    raise typer.Exit(code)
