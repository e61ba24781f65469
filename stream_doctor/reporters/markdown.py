"""A Markdown summary of ``check``, fit for ``$GITHUB_STEP_SUMMARY`` or a pull-request comment.

Capture text (paths, names, messages) is never markup here: a code span's fence is longer than any
run of backquotes in its text, so nothing in it can close the span (after which GitHub would render
a tag such as ``<img>``), and text outside code has ``<`` and Markdown's own characters escaped.
Each piece is cut at a length with a marker (a 10 MB tool name must not make a 30 MB summary:
GitHub keeps 1 MiB of it); the JSON report keeps every value whole.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from stream_doctor.reporters import RenderOptions, _neutral
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.check.result import CaptureResult, CheckResult


def render(result: CheckResult, options: RenderOptions) -> str:
    captures = result.captures
    failed = result.failed_captures
    verdict = "❌ failed" if result.failed else "✅ passed"
    lines = [
        "## stream-doctor check",
        "",
        f"**{verdict}** (`--fail-on {result.fail_on.label}`): {len(captures)} captures, "
        f"{len(captures) - failed} passed, {failed} failed"
        + (f"; {len(result.skipped)} files skipped (not captures)" if result.skipped else "")
        + (f"; {_special_count(len(result.special))}" if result.special else "")
        + (f"; **{result.unreadable_accepted_words}**" if result.unreadable_accepted_words else "")
        + ".",
        *(
            f"\nAccepted as unreadable by `--update-expectations`: {_code(path)} (SD000 declared)."
            for path in result.accepted
        ),
        "",
        "| capture | provider | calls | error | warning | info | result |",
        "|---|---|--:|--:|--:|--:|---|",
    ]
    lines += [_row(c) for c in options.rows(captures)]
    lines += _more(len(captures), options, "capture")
    if result.failures:
        lines += ["", f"### Failures ({len(result.failures)})", ""]
        lines += [_item(c, f) for c, f in options.rows(result.failures)]
        lines += _more(len(result.failures), options, "failure")
    expected = result.expected
    if expected:
        lines += ["", "<details><summary>Expected findings (" + str(len(expected)) + ")</summary>", ""]
        lines += [f"- {f.code} {_cell(f.name)} at {_code(str(f.location))}" for _c, f in options.rows(expected)]
        lines += _more(len(expected), options, "expected finding")
        lines += ["", "</details>"]
    rest = result.below_threshold
    if rest:
        lines += ["", f"<details><summary>Below --fail-on ({len(rest)})</summary>", ""]
        lines += [_item(c, f) for c, f in options.rows(rest)]
        lines += _more(len(rest), options, "finding")
        lines += ["", "</details>"]
    if result.special:
        lines += ["", f"<details><summary>Not regular files, never opened ({len(result.special)})</summary>", ""]
        lines += [f"- {_code(f.path)}: {f.described}" for f in options.rows(result.special)]
        lines += _more(len(result.special), options, "file")
        lines += ["", "</details>"]
    return _neutral.defuse_commands("\n".join(lines) + "\n")


def _special_count(count: int) -> str:
    return f"{count} skipped (not regular file{'s' if count != 1 else ''}: FIFO, device or socket)"


def _more(total: int, options: RenderOptions, what: str) -> list[str]:
    """A step summary must stay short (GitHub keeps 1 MiB of it): rows beyond max_rows are counted, not listed."""
    hidden = total - options.max_rows if options.max_rows else 0
    return (
        [f"- … {hidden:,} more {what}{'s' if hidden != 1 else ''} (all of them: `--report json`)"] if hidden > 0 else []
    )


def _row(capture: CaptureResult) -> str:
    replayed = capture.replayed
    counts = capture.counts
    cells = [
        _code(capture.shown),
        _cell(replayed.provider) if replayed else "—",
        str(replayed.calls) if replayed else "—",
        *(str(counts[s]) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)),
        ("**failed**" if capture.failed else "passed") + _notes(capture),
    ]
    return "| " + " | ".join(cells) + " |"


def _notes(capture: CaptureResult) -> str:
    notes = [capture.session_note] if capture.session_note else []
    notes += ["unreadable"] if capture.unreadable else []
    notes += [f"{len(capture.stale)} stale"] if capture.stale else []
    notes += [f"{len(capture.expected)} expected"] if capture.expected else []
    return f" ({', '.join(notes)})" if notes else ""


def _item(capture: CaptureResult, finding: Finding) -> str:
    return (
        f"- **{finding.severity.label} {finding.code} {finding.name}** at {_code(str(finding.location))}: "
        f"{_cell(finding.message)}  \n  _hint: {_cell(finding.hint)}_"
    )


#: Characters of a path or location shown in a code span, and of a name or message shown as text.
CODE_LIMIT = 500
TEXT_LIMIT = 2_000
_BACKQUOTES = re.compile("`+")


def _clipped(text: str, limit: int) -> str:
    """``text`` cut at ``limit`` characters, saying how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters; --report json has them all)"


def _code(text: str) -> str:
    """Inline code that nothing in the text can close: a fence one backquote longer than the text's
    longest run of them (CommonMark ends a code span only at a run of exactly its fence's length)."""
    shown = _neutral.text(_clipped(text, CODE_LIMIT)).replace("|", "\\|")  # GitHub's tables split on | even in code
    fence = "`" * (1 + max((len(run) for run in _BACKQUOTES.findall(shown)), default=0))
    if (
        shown.startswith("`")
        or shown.endswith("`")
        or (shown.startswith(" ") and shown.endswith(" ") and shown.strip())
    ):
        shown = f" {shown} "  # one space each side is stripped again, keeping a backquote off the fence
    return f"{fence}{shown}{fence}"


def _cell(text: str) -> str:
    escaped = (
        _clipped(text, TEXT_LIMIT).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")
    )
    escaped = _neutral.text(escaped)
    for char in "`*_[]":  # no code spans or emphasis from a message's own text
        escaped = escaped.replace(char, "\\" + char)
    return escaped
