"""A progress bar for long ``check`` runs, only where a person watches a terminal."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

#: Fewer captures than this finish before a bar would be worth drawing.
MIN_CAPTURES = 20


@contextmanager
def progress(total: int, enabled: bool) -> Iterator[Callable[[], None]]:
    """Yield the function to call after each capture; a no-op when disabled or the run is short."""
    if not enabled or total < MIN_CAPTURES:
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    # On stderr, and gone when done: standard output holds the reports.
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("check", total=total)
        yield lambda: bar.advance(task)
