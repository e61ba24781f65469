"""Expectations: the findings a fixture that shows a bug on purpose must produce.

A capture's expectations live in a sidecar next to it, ``<capture>.expect.toml`` (the whole file
name plus ``.expect.toml``, so ``bug.sse`` and ``bug.jsonl`` never share one, and a listing sorts
it right after its capture), or in the configuration's ``expect`` table. Each entry names a code
and, optionally, the call id and the line the finding must have::

    [[expect]]
    code = "SD102"
    name = "empty-input-execution"   # for the reader; not compared
    call-id = "toolu_01A09q90qw90lq917835lq9"

An entry matches every finding it describes. A finding no entry matches is unexpected; an entry
that matches no finding is stale (SD900), unless its rule is not selected for that capture.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from stream_doctor.config import CheckError, parse_toml
from stream_doctor.rules.check import sd900_stale_expectation as sd900
from stream_doctor.values.findings import Finding, Location
from stream_doctor.values.options import Options

SIDECAR_SUFFIX = ".expect.toml"
ENTRY_KEYS = ("code", "name", "call-id", "line")
CODE_PATTERN = re.compile(r"SD[0-9]{3}")


@dataclass(frozen=True)
class Expectation:
    code: str
    declared_at: Location  # the sidecar or configuration file, and the entry's line there
    call_id: str | None = None
    line: int | None = None
    name: str | None = None

    def matches(self, finding: Finding) -> bool:
        return (
            finding.code == self.code
            and (self.call_id is None or finding.call_id == self.call_id)
            and (self.line is None or finding.location.line == self.line)
        )

    def describe(self) -> str:
        """``SD102 empty-input-execution (call toolu_01A, line 7)`` for messages."""
        details = [f"call {self.call_id}"] if self.call_id else []
        details += [f"line {self.line}"] if self.line is not None else []
        text = self.code + (f" {self.name}" if self.name else "")
        return text + (f" ({', '.join(details)})" if details else "")


@dataclass(frozen=True)
class Verdict:
    """A capture's findings sorted against its expectations."""

    expected: tuple[Finding, ...]
    unexpected: tuple[Finding, ...]  # stale expectations are here too, as SD900 findings
    stale: tuple[Expectation, ...]


def sidecar_path(capture: str) -> str:
    return capture + SIDECAR_SUFFIX


def is_sidecar(path: str) -> bool:
    return path.endswith(SIDECAR_SUFFIX)


def load_sidecar(capture: str) -> tuple[Expectation, ...]:
    """The expectations in ``capture``'s sidecar; none when it has no sidecar. Bad content: CheckError."""
    from stream_doctor.util.opener import UnreadableFile, read_text

    path = sidecar_path(capture)
    try:
        text = read_text(path)
    except UnreadableFile as error:
        if error.missing:
            return ()
        raise CheckError(f"{path}: cannot read the expectations: {error}") from None
    document = parse_toml(text, path)
    unknown = sorted(set(document) - {"expect"})
    if unknown:
        raise CheckError(f"{path}: unknown key {unknown[0]!r} (a sidecar holds only [[expect]] entries)")
    entries = document.get("expect", [])
    if not isinstance(entries, list):
        raise CheckError(f"{path}: 'expect' must be an array of tables ([[expect]])")
    lines = _entry_lines(text)
    return tuple(
        parse_entry(entry, path, Location(path, lines[number] if number < len(lines) else None), "expect")
        for number, entry in enumerate(entries)
    )


def from_header(capture: str, header: dict[str, Any] | None) -> tuple[Expectation, ...]:
    """What an envelope's header declares with ``"expect": ["SD102", …]`` (docs/envelope.md): an
    alternative to a sidecar for a single file. A code that names no rule: CheckError."""
    listed = header.get("expect") if header else None
    if not isinstance(listed, list):
        return ()
    where = Location(capture, 1)
    return tuple(parse_entry(code, capture, where, 'the envelope header\'s "expect"') for code in listed)


def parse_entry(entry: object, file: str, declared_at: Location, where: str) -> Expectation:
    """One expectation: a code (``"SD102"``) or a table with ``code`` and optional ``call-id``/``line``."""
    if isinstance(entry, str):
        entry = {"code": entry}
    if not isinstance(entry, dict):
        raise CheckError(f"{file}: each entry of {where} must be a code or a table with a 'code' key")
    unknown = sorted(set(entry) - set(ENTRY_KEYS))
    if unknown:
        raise CheckError(f"{file}: unknown key {unknown[0]!r} in {where} (known: {', '.join(ENTRY_KEYS)})")
    code = entry.get("code")
    if not isinstance(code, str) or not CODE_PATTERN.fullmatch(code.upper()):
        raise CheckError(f"{file}: {where} entry needs 'code', a rule code such as \"SD102\" (got {code!r})")
    call_id, line, name = entry.get("call-id"), entry.get("line"), entry.get("name")
    if call_id is not None and not isinstance(call_id, str):
        raise CheckError(f"{file}: 'call-id' in {where} must be a string")
    if line is not None and (not isinstance(line, int) or isinstance(line, bool) or line < 1):
        raise CheckError(f"{file}: 'line' in {where} must be a positive integer")
    if name is not None and not isinstance(name, str):
        raise CheckError(f"{file}: 'name' in {where} must be a string")
    return Expectation(code.upper(), declared_at, call_id, line, name)


def compare(
    capture: str,
    findings: Sequence[Finding],
    expectations: Iterable[Expectation],
    selected: Callable[[str], bool],
) -> Verdict:
    """Sort findings into expected and unexpected, and find the stale expectations among the selected rules."""
    applicable = [e for e in expectations if selected(e.code)]
    expected = tuple(f for f in findings if any(e.matches(f) for e in applicable))
    stale = tuple(e for e in applicable if not any(e.matches(f) for f in findings))
    matched = set(expected)  # a set: a capture may hold 100,000 findings
    unexpected = tuple(f for f in findings if f not in matched)
    stale_findings = tuple(sd900.finding(capture, e.declared_at, e.describe()) for e in stale)
    return Verdict(expected, unexpected + stale_findings, stale)


def selector(options: Options) -> Callable[[str], bool]:
    """Is a rule selected for this capture? SD000 always is: an unreadable capture cannot be ignored away."""
    from stream_doctor.config.selection import enabled

    def selected(code: str) -> bool:
        if code == "SD000":
            return True
        return enabled(code, options.select, options.ignore)

    return selected


def updated_entries(
    current: Sequence[Expectation], verdict: Verdict, findings: Sequence[Finding], wanted: Callable[[Finding], bool]
) -> list[Mapping[str, Any]]:
    """The sidecar entries after ``--update-expectations``: kept entries that still match, plus new findings."""
    entries: list[Mapping[str, Any]] = [
        _entry(e.code, e.name, e.call_id, e.line) for e in current if e not in verdict.stale
    ]
    for finding in findings:
        if finding in verdict.expected or finding.code == sd900.check.code or not wanted(finding):
            continue
        entry = _entry(finding.code, finding.name, finding.call_id, None)
        if entry not in entries:
            entries.append(entry)
    return entries


def write_sidecar(capture: str, entries: Sequence[Mapping[str, Any]]) -> bool:
    """Write (or, with no entries, remove) ``capture``'s sidecar. True when the file changed."""
    path = sidecar_path(capture)
    if not entries:
        if os.path.exists(path):
            os.remove(path)
            return True
        return False
    try:
        text = render_sidecar(entries)
    except ValueError as error:
        raise CheckError(f"{path}: cannot write the expectations: {error}") from None
    from stream_doctor.util.opener import UnreadableFile, read_bytes

    try:
        if read_bytes(path) == text.encode("utf-8"):
            return False
    except UnreadableFile:
        pass  # none yet, or one atomic.write refuses to replace with its own message
    from stream_doctor.util.atomic import OutputError, write

    try:
        write(path, text, (capture,))
    except OutputError as error:
        raise CheckError(f"{path}: cannot write the expectations: {error}") from None
    return True


def render_sidecar(entries: Sequence[Mapping[str, Any]]) -> str:
    """The sidecar's TOML, built from values: its comment is ours alone (the capture's name, which may
    hold anything, is in none of it), each key one of ``ENTRY_KEYS``, each value a TOML integer or
    basic string (``toml_value``), so reading it back gives exactly ``entries``."""
    lines = [
        "# The findings the capture this file is named after must produce: each entry must still appear,",
        "# and any other finding at or above --fail-on fails `stream-doctor check`. Written by",
        "# `check --update-expectations`; edit freely (keys: code, name, call-id, line).",
    ]
    for entry in entries:
        lines += ["", "[[expect]]"]
        lines += [f"{key} = {toml_value(value)}" for key, value in entry.items() if value is not None]
    return "\n".join(lines) + "\n"


def _entry(code: str, name: str | None, call_id: str | None, line: int | None) -> dict[str, Any]:
    return {"code": code, "name": name, "call-id": call_id, "line": line}


#: The TOML 1.0 basic-string escapes with a short form; every other control character is \\uXXXX.
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_value(value: object) -> str:
    """An integer, or a TOML basic string holding exactly ``str(value)``: the quote, the backslash
    and the control characters TOML forbids raw (U+0000-U+001F, U+007F) escaped. A lone surrogate,
    which no TOML string can hold (a ``\\u`` escape must be a Unicode scalar value): ValueError."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    escaped = []
    for char in str(value):
        if char in _SHORT_ESCAPES:
            escaped.append(_SHORT_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            escaped.append(f"\\u{ord(char):04X}")
        elif 0xD800 <= ord(char) < 0xE000:
            raise ValueError(f"a TOML string cannot hold the lone surrogate U+{ord(char):04X}")
        else:
            escaped.append(char)
    return '"' + "".join(escaped) + '"'


def _entry_lines(text: str) -> list[int]:
    """The line of each ``[[expect]]`` header, in order: where an SD900 finding points."""
    return [number for number, line in enumerate(text.splitlines(), 1) if line.strip().startswith("[[expect]]")]
