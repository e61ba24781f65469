"""Configuration: ``[tool.stream-doctor]`` in ``pyproject.toml``, or a ``stream-doctor.toml``.

The file is found by walking up from the working directory; in each folder ``stream-doctor.toml``
comes before ``pyproject.toml``, and a ``pyproject.toml`` without the table is passed over. Paths
and patterns in it are relative to its folder. Command-line options win over it. Example::

    [tool.stream-doctor]
    fail-on = "warning"
    ignore = ["SD305"]
    exclude = ["captures/scratch/**"]

    [tool.stream-doctor.per-path-ignores]
    "captures/relay/**" = ["SD001"]        # the relay's keep-alives are not JSON

    [tool.stream-doctor.per-path-provider]
    "captures/sdk-logs/*.jsonl" = "anthropic"

    [tool.stream-doctor.expect]
    "captures/bugs/empty_input.jsonl" = ["SD102"]

``sessions`` names folders (globs) whose files are one session's exchanges: ``check`` replays each
such folder as one conversation, one entry, as ``replay FOLDER`` would.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stream_doctor.capture.limits import DEFAULT_MAX_BYTES, DEFAULT_MAX_FRAMES
from stream_doctor.config import CheckError, parse_toml
from stream_doctor.config.expectations import Expectation, parse_entry
from stream_doctor.config.globs import Glob, GlobError
from stream_doctor.config.locate import FILE_NAMES as FILE_NAMES  # re-exported: callers and tests name them here
from stream_doctor.config.locate import find as find
from stream_doctor.config.locate import nearest as nearest
from stream_doctor.values.findings import Location, Severity

KEYS = (
    "select",
    "ignore",
    "extend-select",
    "fail-on",
    "provider",
    "container",
    "jobs",
    "max-bytes",
    "max-frames",
    "exclude",
    "per-path-ignores",
    "per-file-ignores",  # ruff's name for per-path-ignores; both may be used
    "per-path-provider",
    "respect-gitignore",
    "expect",
    "sessions",
)
CODE_PREFIX = re.compile(r"SD[0-9]{0,3}")


@dataclass(frozen=True)
class Config:
    """The configuration file's settings (or the defaults, when there is no file)."""

    path: str | None = None  # as found, relative to the working directory when it is below it
    root: str = "."  # the folder its patterns are relative to
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: Severity = Severity.ERROR
    provider: str | None = None
    container: str | None = None
    jobs: int = 1
    max_bytes: int = DEFAULT_MAX_BYTES  # per capture, once decompressed
    max_frames: int = DEFAULT_MAX_FRAMES
    exclude: tuple[Glob, ...] = ()
    per_path_ignores: tuple[tuple[Glob, tuple[str, ...]], ...] = ()
    extend_select: tuple[str, ...] = ()
    respect_gitignore: bool = True
    per_path_provider: tuple[tuple[Glob, str], ...] = ()
    expect: tuple[tuple[Glob, tuple[Expectation, ...]], ...] = ()
    sessions: tuple[Glob, ...] = ()  # folders whose captures are one conversation each (check)

    def relative(self, path: str) -> str:
        """``path`` (relative to the working directory) relative to the configuration's folder."""
        if self.root == ".":
            return path
        return Path(os.path.relpath(path, self.root)).as_posix()

    def excluded(self, path: str) -> bool:
        relative = self.relative(path)
        return any(glob.matches(relative) for glob in self.exclude)

    def ignores_for(self, path: str) -> tuple[str, ...]:
        relative = self.relative(path)
        return tuple(code for glob, codes in self.per_path_ignores if glob.matches(relative) for code in codes)

    def provider_for(self, path: str) -> str | None:
        relative = self.relative(path)
        return next((name for glob, name in self.per_path_provider if glob.matches(relative)), self.provider)

    def is_session(self, folder: str) -> bool:
        """Is ``folder`` (relative to the working directory) one session's folder, its files one conversation?"""
        relative = self.relative(folder)
        return relative not in (".", "") and any(glob.matches(relative) for glob in self.sessions)

    def expectations_for(self, path: str) -> tuple[Expectation, ...]:
        relative = self.relative(path)
        return tuple(e for glob, entries in self.expect if glob.matches(relative) for e in entries)


def load(path: str | None) -> Config:
    """Read and validate a configuration file; ``None`` gives the defaults. Anything wrong: CheckError."""
    if path is None:
        return Config()
    from stream_doctor.util.opener import UnreadableFile, read_text

    try:
        text = read_text(path)
    except UnreadableFile as error:
        raise CheckError(f"{path}: cannot read the configuration: {error}") from None
    document = parse_toml(text, path)
    if Path(path).name == "pyproject.toml":
        tool = document.get("tool")
        table, where = (tool.get("stream-doctor") if isinstance(tool, dict) else None) or {}, "[tool.stream-doctor]"
    else:
        table, where = document, "the top level"
    if not isinstance(table, dict):
        raise CheckError(f"{path}: [tool.stream-doctor] must be a table")
    return _parse(table, path, where, text)


def _parse(table: dict[str, Any], path: str, where: str, text: str) -> Config:
    read = _Reader(path, text)
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        from stream_doctor.util.choices import suggestion

        line = read.line_of(unknown[0])
        raise CheckError(
            f"{path}{'' if line is None else f':{line}'}: unknown key {unknown[0]!r} in {where}"
            f"{suggestion(unknown[0], KEYS)} (known keys: {', '.join(KEYS)})"
        )
    ignores = {
        **read.table(table.get("per-path-ignores", {}), "per-path-ignores"),
        **read.table(table.get("per-file-ignores", {}), "per-file-ignores"),
    }
    gitignore = table.get("respect-gitignore", True)
    if not isinstance(gitignore, bool):
        raise read.fail("respect-gitignore", f"must be true or false (got {gitignore!r})")
    return Config(
        path=path,
        root=os.path.dirname(path) or ".",
        select=read.codes(table.get("select", []), "select"),
        ignore=read.codes(table.get("ignore", []), "ignore"),
        extend_select=read.codes(table.get("extend-select", []), "extend-select"),
        respect_gitignore=gitignore,
        fail_on=read.severity(table.get("fail-on", "error"), "fail-on"),
        provider=read.provider(table.get("provider"), "provider"),
        container=read.container(table.get("container"), "container"),
        jobs=read.jobs(table.get("jobs", 1), "jobs"),
        max_bytes=read.size(table.get("max-bytes", DEFAULT_MAX_BYTES), "max-bytes"),
        max_frames=read.count(table.get("max-frames", DEFAULT_MAX_FRAMES), "max-frames"),
        exclude=tuple(read.glob(p, "exclude") for p in read.strings(table.get("exclude", []), "exclude")),
        per_path_ignores=tuple(
            (read.glob(pattern, "per-path-ignores"), read.codes(codes, pattern)) for pattern, codes in ignores.items()
        ),
        per_path_provider=tuple(
            (read.glob(pattern, "per-path-provider"), read.provider(name, pattern) or "")
            for pattern, name in read.table(table.get("per-path-provider", {}), "per-path-provider").items()
        ),
        sessions=tuple(read.glob(p, "sessions") for p in read.strings(table.get("sessions", []), "sessions")),
        expect=tuple(
            (read.glob(pattern, "expect"), read.expectations(entries, pattern))
            for pattern, entries in read.table(table.get("expect", {}), "expect").items()
        ),
    )


class _Reader:
    """Typed reading of the table's values; each error names the file and the key."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text

    def fail(self, key: str, what: str) -> CheckError:
        line = self.line_of(key)
        return CheckError(f"{self.path}{'' if line is None else f':{line}'}: '{key}' {what}")

    def line_of(self, key: str) -> int | None:
        """The line where ``key`` is set (tomllib keeps no positions; keys are found by their text)."""
        for number, line in enumerate(self.text.splitlines(), 1):
            stripped = line.strip()
            for quoted in (key, f'"{key}"', f"'{key}'"):
                rest = stripped[len(quoted) :].lstrip() if stripped.startswith(quoted) else None
                if rest is not None and rest.startswith("="):
                    return number
            if stripped.startswith("[") and stripped.rstrip("]").endswith(("." + key, "[" + key)):
                return number
        return None

    def provider(self, value: Any, key: str) -> str | None:
        from stream_doctor.config.selection import check_provider

        try:
            return check_provider(self.string(value, key))
        except ValueError as error:
            raise self.fail(key, str(error)) from None

    def container(self, value: Any, key: str) -> str | None:
        from stream_doctor.config.selection import check_container

        try:
            return check_container(self.string(value, key))
        except ValueError as error:
            raise self.fail(key, str(error)) from None

    def string(self, value: Any, key: str) -> str | None:
        if value is not None and not isinstance(value, str):
            raise self.fail(key, "must be a string")
        return value

    def glob(self, pattern: str, table: str) -> Glob:
        try:
            return Glob(pattern).check()
        except GlobError as error:
            line = self.line_of(pattern if table not in ("exclude", "sessions") else table)
            where = f"{self.path}{'' if line is None else f':{line}'}"
            raise CheckError(f"{where}: the pattern {pattern!r} in '{table}' is not a valid glob: {error}") from None

    def strings(self, value: Any, key: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, "must be a list of strings")
        return tuple(value)

    def codes(self, value: Any, key: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, 'must be a list of rule codes or prefixes, e.g. ["SD1", "SD305"]')
        codes = tuple(v.strip().upper() for v in value)
        bad = [c for c in codes if not CODE_PREFIX.fullmatch(c) and c != "ALL"]
        if bad:
            raise self.fail(key, f"holds {bad[0]!r}, which is not a rule code or prefix (SD, SD1, SD102)")
        from stream_doctor.config.selection import check_selectors

        try:
            check_selectors(codes, key)
        except ValueError as error:
            raise self.fail(key, str(error).split(": ", 1)[-1]) from None
        return codes

    def severity(self, value: Any, key: str) -> Severity:
        from stream_doctor.config.selection import check_severity

        try:
            return check_severity(value if isinstance(value, str) else repr(value))
        except ValueError as error:
            raise self.fail(key, str(error)) from None

    def jobs(self, value: Any, key: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise self.fail(key, "must be a whole number of processes (0: one per CPU)")
        return value

    def size(self, value: Any, key: str) -> int:
        from stream_doctor.capture.limits import parse_size

        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
        try:
            return parse_size(value) if isinstance(value, str) else parse_size("")
        except ValueError:
            raise self.fail(key, f'must be a size in bytes, e.g. 1073741824 or "1GiB" (got {value!r})') from None

    def count(self, value: Any, key: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise self.fail(key, f"must be a whole number above 0 (got {value!r})")
        return value

    def table(self, value: Any, key: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(key, 'must be a table of path patterns, e.g. {"captures/**" = ...}')
        return value

    def expectations(self, entries: Any, pattern: str) -> tuple[Expectation, ...]:
        key = f"expect.{pattern!r}"
        if not isinstance(entries, list):
            raise self.fail(key, "must be a list of codes or tables")
        declared_at = Location(self.path, self._line_of(pattern))
        return tuple(parse_entry(entry, self.path, declared_at, key) for entry in entries)

    def _line_of(self, key: str) -> int | None:
        """Where an ``expect`` key is written, for SD900's location: tomllib does not keep positions."""
        lines = self.text.splitlines()
        headers = ("[expect]", "[tool.stream-doctor.expect]")
        start = next((n for n, line in enumerate(lines) if line.strip().replace(" ", "") in headers), 0)
        for number, line in enumerate(lines[start:], start + 1):
            if line.lstrip().startswith((f'"{key}"', f"'{key}'", f"{key} ", f"{key}=")):
                return number
        return None
