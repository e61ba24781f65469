"""The work of ``stream-doctor scan``: ``run`` takes the command's options (``cli/scan.py``'s ``Scan``),
scans on Dask (``scan/``) and returns the exit code."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stream_doctor.cli.output import fail, internal_error, render_options
from stream_doctor.cli.validate import codes

if TYPE_CHECKING:
    from stream_doctor.cli.scan import Scan
    from stream_doctor.values.command_options import ScanOptions


def run(given: Scan) -> int:
    """Scan the inputs and write the tables and summaries; the exit code (1: ``--fail-on`` reached)."""
    from stream_doctor.scan import ScanError

    for path in given.summary:
        if not path.endswith((".md", ".json")):
            fail(f"--summary {path}: name a .md (Markdown) or .json file")
    try:
        from stream_doctor.scan.outcome import run_scan

        return run_scan(_options(given), render_options(given.width, given.color))
    except ScanError as error:
        fail(str(error))
    except Exception as error:  # noqa: BLE001 - a bug of ours must still not print a traceback
        internal_error(error, "scan")


def _options(given: Scan) -> ScanOptions:
    from stream_doctor.values.command_options import ScanOptions
    from stream_doctor.values.options import Given

    return ScanOptions(
        inputs=tuple(given.inputs),
        out=given.out,
        status=given.status,
        summaries=tuple(given.summary),
        body_column=given.body_column,
        id_column=given.id_column,
        model_column=given.model_column,
        meta_columns=tuple(given.meta_column),
        scheduler=given.scheduler,
        workers=given.workers,
        batch_size=given.batch_size,
        sample=given.sample,
        seed=given.seed,
        resume=given.resume,
        given=Given(
            select=codes(given.select) or None,
            ignore=codes(given.ignore),
            provider=given.provider,
            container=given.container,
        ),
        fail_on=given.fail_on,
    )
