"""The one way stream-doctor opens a file to read it: regular files only, size-capped, text decoded.

Every file read comes from a stranger: a capture, an ``.expect.toml`` sidecar, a configuration
(``pyproject.toml``, ``stream-doctor.toml``), a ``.gitignore``, a ``--tools`` or ``--executions``
file, ``scan``'s status table. A FIFO among them would block ``open`` for ever, a link to
``/dev/zero`` would be read until memory runs out, and a folder or a socket gives a traceback. So
each read goes through ``opened`` (or ``read_bytes``/``read_text`` on it): ``stat`` before
``open``, ``open`` without blocking, ``fstat`` on what was opened (a file swapped in between is
caught), and a cap on the bytes read. What it refuses is an ``UnreadableFile`` whose message is
one line without the path, for the caller to prefix with the path and what the file was for.

``tests/test_opener.py`` walks the package's syntax tree and fails on an ``open(``,
``.read_text(``, ``.read_bytes(`` or ``.open(`` call outside this module that is not on its
commented allow-list (writes, package resources): grep ``SINGLE OPENER`` for the rule.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

#: How much a file stream-doctor reads for its own use (configuration, sidecar, .gitignore, tool
#: definitions, executions) may hold: far above any real one, far below what hurts.
MAX_SMALL_FILE = 16 << 20

_CHUNK = 1 << 20

#: Each kind of file that is not a regular one: its test, its name in machine output, its words.
_KINDS = (
    (stat.S_ISFIFO, "fifo", "a named pipe (FIFO)"),
    (stat.S_ISCHR, "character-device", "a character device"),
    (stat.S_ISBLK, "block-device", "a block device"),
    (stat.S_ISSOCK, "socket", "a socket"),
    (stat.S_ISDIR, "directory", "a directory"),
)
#: The words for each kind name (``other``: a door, a whiteout …; ``broken-link``: a link to nothing;
#: ``outside-link``: a link that leaves the folder ``check`` searches).
KIND_WORDS = {name: words for _test, name, words in _KINDS} | {
    "other": "not a regular file",
    "broken-link": "a symbolic link to nothing",
    "outside-link": "a symbolic link out of the checked folder",  # check's discovery, never opened
}


class UnreadableFile(Exception):
    """A file that was not read; ``str()`` is one line saying why, without the path."""

    def __init__(self, message: str, kind: str | None = None, missing: bool = False) -> None:
        super().__init__(message)
        self.kind = kind  # the file's kind (KIND_WORDS key) when it is not a regular file
        self.missing = missing  # there is no such file


class TooLarge(UnreadableFile):
    """The file holds more than the cap."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"larger than {limit:,} bytes")
        self.limit = limit


def file_kind(mode: int) -> str | None:
    """The kind name (``fifo``, ``socket`` …, keys of ``KIND_WORDS``) of a file that is not a regular one."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name, _words in _KINDS if test(mode)), "other")


def not_regular(mode: int) -> str | None:
    """What kind of file ``mode`` is when it is not a regular file (None for a regular file)."""
    kind = file_kind(mode)
    return None if kind is None else KIND_WORDS[kind]


@contextmanager
def opened(path: str, max_bytes: int | None) -> Iterator[BinaryIO]:
    """The regular file at ``path``, open for reading in binary; UnreadableFile for anything else,
    or for one whose size is over ``max_bytes`` (None: no cap, for a file read in pieces by a library)."""
    try:
        _refuse(file_kind(os.stat(path).st_mode))  # before open(): opening a FIFO would block
        # O_NONBLOCK: should a FIFO be swapped in between stat and open, open must not wait for a writer
        file = open(path, "rb", opener=_nonblocking)  # noqa: SIM115 - closed below, after the caller's reads
    except FileNotFoundError:
        raise UnreadableFile("no such file", missing=True) from None
    except PermissionError:
        raise UnreadableFile("permission denied") from None
    except OSError as exc:
        raise UnreadableFile(f"cannot read the file: {exc.strerror or exc}") from None
    with file:
        try:
            info = os.fstat(file.fileno())
        except OSError as exc:
            raise UnreadableFile(f"cannot read the file: {exc.strerror or exc}") from None
        _refuse(file_kind(info.st_mode))
        if max_bytes is not None and info.st_size > max_bytes:
            raise TooLarge(max_bytes)
        yield file


def read_capped(file: BinaryIO, max_bytes: int) -> bytes:
    """What is left in ``file``, refusing (TooLarge) past ``max_bytes``: a file may grow after its ``fstat``."""
    chunks: list[bytes] = []
    total = 0
    step = _CHUNK
    try:  # a regular file in one read of its stated size: joining 1 MiB chunks would hold it twice
        step = max(_CHUNK, os.fstat(file.fileno()).st_size + 1)
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is an OSError and a ValueError
        pass
    while True:
        try:
            chunk = file.read(min(step, max_bytes + 1 - total))
            step = _CHUNK
        except OSError as exc:
            raise UnreadableFile(f"cannot read the file: {exc.strerror or exc}") from None
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > max_bytes:
            raise TooLarge(max_bytes)


def read_bytes(path: str, max_bytes: int = MAX_SMALL_FILE) -> bytes:
    with opened(path, max_bytes) as file:
        return read_capped(file, max_bytes)


def read_text(path: str, max_bytes: int = MAX_SMALL_FILE, errors: str = "strict") -> str:
    """The file's text, UTF-8 (a byte-order mark dropped); UnreadableFile naming the first bad byte."""
    data = read_bytes(path, max_bytes)
    try:
        return data.decode("utf-8-sig", errors)
    except UnicodeDecodeError as error:
        raise UnreadableFile(f"not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start})") from None


def _nonblocking(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))


def _refuse(kind: str | None) -> None:
    if kind is not None:
        raise UnreadableFile(f"is {KIND_WORDS[kind]}, not a regular file", kind=kind)
