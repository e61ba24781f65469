"""The human report of ``check``: one row per capture, then what failed, what was expected, the rest.

Returns text; the options pick the width and whether to colour it (``color_system=None``: plain).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stream_doctor.reporters import RenderOptions, _text
from stream_doctor.reporters._neutral import text as N  # capture paths and finding texts go through N
from stream_doctor.reporters._page import Page, Span
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.check.result import CaptureResult, CheckResult


def render(result: CheckResult, options: RenderOptions) -> str:
    console = _text.page(options)
    _table(result, console, options)
    _failures(result, console, options)
    _expected(result, console, options)
    _below_threshold(result, console, options)
    _summary(result, console)
    return _text.finish(console.text(), options)


def _table(result: CheckResult, console: Page, options: RenderOptions) -> None:
    """Aligned by hand, not wrapped: a row per capture. A path wider than the room the other columns
    leave is printed on lines of its own, its row under it, broken after a ``/`` where one fits
    (issue 36: it had run past the width): every line stays in the width handed."""
    headers = ["capture", "provider", "calls", "error", "warning", "info"]
    rows = []
    captures = options.rows(result.captures)
    for capture in captures:
        counts = capture.counts
        replayed = capture.replayed
        rows.append(
            [
                N(capture.shown),
                N(replayed.provider) if replayed else "—",
                f"{replayed.calls:,}" if replayed else "—",
                *(f"{counts[s]:,}" if counts[s] else "·" for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)),
            ]
        )
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def cells(values: list[str]) -> str:
        return "  ".join(
            v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(values, widths, strict=True))
        )

    verdicts = [_verdict(capture) for capture in captures]
    verdict_width = max((sum(len(text) for text, _ in spans) for spans in verdicts), default=len("passed"))
    room = options.width - sum(widths[1:]) - 2 * len(widths) - verdict_width
    widths[0] = max(min(widths[0], room), len(headers[0]))
    console.print((cells(headers) + "  result", "bold"), overflow="none")
    for verdict, row in zip(verdicts, rows, strict=True):
        if len(row[0]) > widths[0]:
            for line in _folded_path(row[0], options.width):
                console.print(line, overflow="none")
            row = ["", *row[1:]]
        console.print(cells(row) + "  ", *verdict)  # notes that still do not fit wrap at a space
    _text.more(console, len(result.captures) - len(captures), "capture", "--report json")


def _folded_path(path: str, width: int) -> list[str]:
    """``path`` in lines of at most ``width`` characters, each ending after a ``/`` where one fits."""
    lines: list[str] = []
    while len(path) > width:
        cut = path.rfind("/", 0, width) + 1 or width  # no "/" in the first width characters: fold there
        lines.append(path[:cut])
        path = path[cut:]
    return [*lines, path]


def _verdict(capture: CaptureResult) -> list[tuple[str, str]]:
    notes = [capture.session_note] if capture.session_note else []
    if capture.unreadable:
        notes.append("unreadable")
    if capture.stale:
        notes.append(f"{len(capture.stale)} stale")
    if capture.expected:
        notes.append(f"{len(capture.expected)} expected")
    word, style = ("failed", "bold red") if capture.failed else ("passed", "green")
    return [(word, style), (f" ({', '.join(notes)})" if notes else "", f"{style} dim")]


def _failures(result: CheckResult, console: Page, options: RenderOptions) -> None:
    failures = result.failures
    if not failures:
        return
    console.blank()
    console.print(("Failures", "bold"), f" ({len(failures):,})")
    _by_capture(failures, console, options)


def _expected(result: CheckResult, console: Page, options: RenderOptions) -> None:
    expected = result.expected
    if not expected:
        return
    console.blank()
    console.print(("Expected", "bold"), f" ({len(expected):,}): declared by the captures' expectations")
    shown = options.rows(expected)
    for _capture, finding in shown:
        location = (f"  {N(str(finding.location))}", "dim")
        console.print("  ", (f"{finding.code} ", "bold"), N(finding.name), location, overflow="ellipsis")
    _text.more(console, len(expected) - len(shown), "expected finding", "--report json")


def _below_threshold(result: CheckResult, console: Page, options: RenderOptions) -> None:
    rest = result.below_threshold
    if not rest:
        return
    console.blank()
    console.print(("Other findings", "bold"), f" ({len(rest):,}): below --fail-on {result.fail_on.label}")
    _by_capture(rest, console, options)


def _by_capture(items: tuple[tuple[CaptureResult, Finding], ...], console: Page, options: RenderOptions) -> None:
    current = None
    shown = options.rows(items)
    for capture, finding in shown:
        if capture.path != current:
            current = capture.path
            console.print((N(capture.shown), "bold"))
        _text.finding(finding, console)
    _text.more(console, len(items) - len(shown), "finding", "--report json, sarif or junit")


def _summary(result: CheckResult, console: Page) -> None:
    captures = result.captures
    failed = result.failed_captures
    parts = [f"{_text.counted(len(captures), 'capture')}: {len(captures) - failed:,} passed"]
    failed_text = f"{failed:,} failed"
    details = []
    unreadable = result.unreadable - len(result.accepted_unreadable)  # the failing ones; the accepted are said below
    stale = result.stale
    if unreadable:
        details.append(f"{unreadable:,} unreadable")
    if stale:
        details.append(_text.counted(stale, "stale expectation"))
    parts.append(failed_text + (f" ({', '.join(details)})" if details else ""))
    if result.unreadable_accepted_words:
        parts.append(result.unreadable_accepted_words)
    if result.skipped:
        parts.append(f"{_text.counted(len(result.skipped), 'file')} skipped (not captures)")
    if result.special:
        count = len(result.special)
        parts.append(f"{count:,} skipped (not regular file{'s' if count != 1 else ''}: FIFO, device or socket)")
    if result.updated:
        parts.append(f"{_text.counted(len(result.updated), 'expectation file')} updated")
    verdict: list[Span] = (
        [("failed", "bold red"), f" (--fail-on {result.fail_on.label})"]
        if result.failed
        else [("passed", "bold green")]
    )
    console.blank()
    for path in result.accepted:
        console.print(("accepted ", "bold yellow"), N(path), " as unreadable: its expectations now declare SD000")
    console.print(f"{', '.join(parts)}: ", *verdict)
    if result.config:
        console.print((f"configuration: {N(result.config)}", "dim"))
