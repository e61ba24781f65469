"""``stream-doctor scan``: every capture of a dataset replayed on Dask, findings written as Parquet.

Not a pipeline stage but a driver around it, like ``check``: ``sources`` turns folders, globs,
fsspec URLs and tables into batches of captures; ``task`` replays one batch on a worker through
``replaying`` (the same library call as ``replay``); ``run`` builds the Dask graph, shows progress,
survives Ctrl-C and resumes; ``output`` writes the findings and status tables; ``summary`` counts.
Only this package imports Dask, pyarrow and fsspec, and only when ``scan`` runs.
"""

from __future__ import annotations

from stream_doctor.util.install import install_extra

#: How to get what ``scan`` needs; the CLI prints it when an import fails.
INSTALL = install_extra("scan")


class ScanError(Exception):
    """``scan`` cannot run at all (a missing extra, an input that does not exist, no scheduler): exit 2, one line."""


def require() -> None:
    """Import the optional dependencies once, or say how to install them."""
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
        import fsspec  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as error:
        missing = error.name or "a dependency"
        raise ScanError(f"scan needs {missing}, which is not installed: {INSTALL}") from None
