"""Progress of a scan on standard error: a bar on a terminal, a line every few seconds elsewhere (CI logs)."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator

if TYPE_CHECKING:
    from rich.progress import Task

#: Seconds between two progress lines when standard error is not a terminal.
LINE_EVERY = 5.0


@contextmanager
def progress(terminal: bool) -> Iterator[tuple[Callable[[int, str], None], Callable[[int], None]]]:
    """Yield ``start(total, where)`` and ``advance(count)``."""
    if terminal:
        with _bar() as callbacks:
            yield callbacks
    else:
        yield from _lines()


@contextmanager
def _bar() -> Iterator[tuple[Callable[[int, str], None], Callable[[int], None]]]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeRemainingColumn
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text(f"{task.speed:,.0f}/s" if task.speed else "…/s")

    console = Console(stderr=True)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("starting Dask", total=None)

        def start(total: int, where: str) -> None:
            console.print(f"scanning {total} captures on {where}", highlight=False, markup=False)
            bar.update(task, total=total, description="scanning")

        yield start, lambda count: bar.advance(task, count)


def _lines() -> Iterator[tuple[Callable[[int, str], None], Callable[[int], None]]]:
    state = {"total": 0, "done": 0, "began": time.monotonic(), "said": 0.0}

    def start(total: int, where: str) -> None:
        state.update(total=total, began=time.monotonic())
        _say(f"scanning {total} captures on {where}")

    def advance(count: int) -> None:
        state["done"] += count
        now = time.monotonic()
        if now - state["said"] >= LINE_EVERY or state["done"] >= state["total"]:
            state["said"] = now
            elapsed = max(now - state["began"], 1e-9)
            rate = state["done"] / elapsed
            left = (state["total"] - state["done"]) / rate if rate else 0
            _say(f"scanned {state['done']}/{state['total']} captures, {rate:,.0f}/s, ETA {left:,.0f} s")

    yield start, advance


def _say(line: str) -> None:
    from stream_doctor.reporters._neutral import one_line  # paths quoted escaped, as error_line does

    sys.stderr.write(one_line(line) + "\n")
    sys.stderr.flush()
