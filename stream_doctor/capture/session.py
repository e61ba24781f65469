"""Several captures of one session (the recording proxy writes one envelope per conversation): which
files, and in what order they are replayed as one conversation.

A folder stands for the regular files directly in it (names starting with "." left out). The files
are put in the order they were recorded when every one says when it began: an envelope header's
``started``, a HAR file's first ``startedDateTime``, a cassette's first ``recorded_at``. An event's
``t`` cannot order them: it counts from its own capture's start, and every proxy envelope starts at
0. Otherwise they go in file-name order, numbers compared as numbers (the proxy's ``0001-…``,
``0002-…``). ``Session.order`` says which was used, and the report repeats it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from stream_doctor.capture._text import BOM
from stream_doctor.capture.base import CaptureError
from stream_doctor.capture.limits import DEFAULT, Limits

Order = Literal["time", "name"]

#: Where HAR files and cassettes say when they began, in the first 64 KiB: (pattern, what the report
#: calls it). An envelope's header line is decoded instead (``_header_started``).
_TIMES = (
    (re.compile(rb'"startedDateTime"\s*:\s*"([^"\n]{1,64})"'), "startedDateTime"),
    (re.compile(rb"\brecorded_at\s*:\s*['\"]?([0-9][^'\"\n]{0,63})"), "recorded_at"),
)

#: How much of each file is read to find when it began.
_HEAD = 64 * 1024


class SessionError(CaptureError):
    """The paths given are not one session's captures; ``path`` is the one the message is about."""

    def __init__(self, path: str, message: str, folders: int = 0) -> None:
        super().__init__(message)
        self.path = path
        self.folders = folders  # a folder of no files: the folders it holds (``check`` searches them)


@dataclass(frozen=True, slots=True)
class Session:
    """The captures to replay as one conversation, in order, and how that order was found."""

    files: tuple[str, ...]
    order: Order
    clock: str | None = None  # the field the times came from ("header started"), when ordered by time
    folder: str | None = None  # the folder given, when one was

    @property
    def label(self) -> str:
        """The session as the report names it: the folder, else the files."""
        if self.folder is not None:
            return self.folder
        if len(self.files) <= 3:
            return ", ".join(self.files)
        return f"{self.files[0]}, … {len(self.files) - 2} more …, {self.files[-1]}"

    @property
    def order_note(self) -> str:
        return f"in time order ({self.clock})" if self.order == "time" else "in file-name order"


def collect(paths: list[str], limits: Limits | None = None) -> Session:
    """The files ``paths`` name (a folder: the files in it), ordered; SessionError when they cannot be one session."""
    if not paths:
        raise SessionError("", "no capture given")
    files: list[str] = []
    folder: str | None = None
    for path in paths:
        if path != "-" and os.path.isdir(path):
            inside = _files_in(path)
            if not inside:
                folders = _folders_in(path)
                only = f", only {folders} folder{'s' if folders != 1 else ''}" if folders else ""
                raise SessionError(path, f"the folder holds no files{only}", folders)
            files += inside
            folder = path if len(paths) == 1 else None
        else:
            files.append(path)
    if "-" in files and len(files) > 1:
        raise SessionError("-", "standard input cannot be one of several captures")
    if len(set(files)) != len(files):
        twice = next(f for f in files if files.count(f) > 1)
        raise SessionError(twice, "named twice: each capture of a session is replayed once")
    if len(files) == 1:
        return Session(tuple(files), "name", None, folder)
    by_name = sorted(files, key=_natural)
    times = [_started(path, limits or DEFAULT) for path in by_name]
    if all(t is not None for t in times):
        clocks = {clock for _, clock in times}  # type: ignore[misc]
        ordered = sorted(zip(by_name, times, strict=True), key=lambda item: item[1][0])  # type: ignore[index]
        return Session(tuple(path for path, _ in ordered), "time", ", ".join(sorted(clocks)), folder)
    return Session(tuple(by_name), "name", None, folder)


def _files_in(folder: str) -> list[str]:
    try:
        names = os.listdir(folder)
    except OSError as error:
        raise SessionError(folder, f"cannot read the folder: {error.strerror or error}") from None
    return [
        os.path.join(folder, name)
        for name in names
        if not name.startswith(".") and os.path.isfile(os.path.join(folder, name))
    ]


def _folders_in(folder: str) -> int:
    return sum(1 for entry in os.scandir(folder) if not entry.name.startswith(".") and entry.is_dir())


def _natural(path: str) -> list[tuple[int, int | str]]:
    """``0002`` before ``0010``, ``turn9`` before ``turn10``: digits compared as numbers."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", path) if part]


def _started(path: str, limits: Limits) -> tuple[datetime, str] | None:
    """When the capture at ``path`` began, as its container records it (None: it does not say)."""
    from stream_doctor.capture.chunks import Origin
    from stream_doctor.capture.chunks import head as read_head

    try:
        head, chunks = read_head(Origin(path, None, limits).chunks(), _HEAD)
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    except (CaptureError, OSError, EOFError, ValueError):
        return None  # the replay reads it again and says why it cannot
    started = _header_started(head)
    if started is not None:
        when = _parsed(started)
        return (when, "header started") if when is not None else None
    for pattern, clock in _TIMES:
        found = pattern.search(head)
        if found is not None:
            when = _parsed(found.group(1).decode("ascii", "replace"))
            return (when, clock) if when is not None else None
    return None


def _header_started(head: bytes) -> str | None:
    """An envelope header's ``started``, when the first line is a header that has one."""
    import orjson

    line = head.removeprefix(BOM).lstrip().partition(b"\n")[0]
    if not line.startswith(b"{"):
        return None
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    started = record.get("started") if type(record) is dict and record.get("sd") == "header" else None
    return started if type(started) is str else None


def _parsed(text: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
