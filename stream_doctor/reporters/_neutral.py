"""Capture content made harmless before it reaches a text report.

Whatever a capture holds (tool names, ids, arguments, URLs) may carry terminal escape sequences,
line breaks that some readers honour (U+2028, NEL, form feed …), or text that GitHub Actions would
run as a workflow command when it begins a line of a job's log (``::add-mask::``, ``##[error]``).
Every text reporter passes such strings through ``text()``, which shows each of those characters
as a visible escape (``\\x1b``, ``\\x85``, ``\\u2028``), and its whole output through
``defuse_commands()``. JSON outputs go through ``jsontext.printable``, which escapes the characters
JSON allows raw but terminals act on, so ``cat report.json`` is safe and the parsed data unchanged.
"""

from __future__ import annotations

import re
from functools import cache

from stream_doctor.util.jsontext import TERMINAL_ACTIVE, escaped


@cache
def _visible() -> dict[int, str]:
    """C0 (tab kept), what JSON may hold raw but a terminal acts on (``jsontext.TERMINAL_ACTIVE``: DEL,
    C1, the line and paragraph separators, the bidirectional overrides and isolates), and lone
    surrogates, which no output can encode (a file name that is not UTF-8: jsontext.escaped).
    Built on first use: most reports never meet such a character, and the 2,048 surrogates cost a
    small replay's start-up."""
    return {
        **{c: f"\\x{c:02x}" for c in range(0x20) if c != 0x09},
        **{c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" for c in TERMINAL_ACTIVE},
        **{c: escaped(chr(c)) for c in range(0xD800, 0xE000)},
    }


@cache
def _command_line() -> re.Pattern[str]:
    """A line that GitHub Actions would read as a command: ``::name …`` or the older ``##[name]``, after
    leading whitespace (the runner trims it). Compiled on first use: only a report holding one asks."""
    return re.compile(r"^([ \t]*)(::|##\[)", re.MULTILINE)


def text(value: str) -> str:
    """``value`` with every control, line-breaking and reordering character shown as an escape."""
    return value if value.isprintable() else value.translate(_visible())


def one_line(value: str) -> str:
    """A line said to a person (an error, a summary naming a capture): ``text()`` and ``defuse_commands()``,
    so it stays one line, acts on no terminal and begins no workflow command."""
    return defuse_commands(text(value))


def keeping_lines(value: str) -> str:
    """``text()`` for text whose own line breaks are ours (indented JSON we serialised)."""
    return "\n".join(text(line) for line in value.split("\n"))


def defuse_commands(rendered: str) -> str:
    """The rendered report with no line that begins a workflow command: its first character escaped."""
    if "::" not in rendered and "##[" not in rendered:
        return rendered
    return _command_line().sub(lambda m: m.group(1) + ("\\x3a:" if m.group(2) == "::" else "\\x23#["), rendered)
