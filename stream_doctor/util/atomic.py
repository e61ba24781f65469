"""Every file stream-doctor writes goes through here: a temporary file beside it, then a rename.

A kill at any moment leaves either the old file or the whole new one, never a half-written or
empty file; and an output that is one of the inputs (the same file, by inode: ``convert c.sse -o
c.sse``, ``check … -r junit:capture.sse``) is refused before anything is read or written.
"""

from __future__ import annotations

import os
import stat
import tempfile
from typing import Iterable


class OutputError(Exception):
    """The output cannot be written; the message is one line, without the path."""


def refuse_inputs(path: str, inputs: Iterable[str]) -> None:
    """OutputError when ``path`` is the same file as one of ``inputs`` (a link or another spelling included)."""
    try:
        target = os.stat(path)
    except OSError:
        return  # nothing there yet: it cannot be an input
    for given in inputs:
        if given in ("-", "<stdin>"):
            continue
        try:
            source = os.stat(given)
        except OSError:
            continue
        if (source.st_dev, source.st_ino) == (target.st_dev, target.st_ino):
            raise OutputError(f"is an input ({given}); refusing to overwrite it")


def write(path: str, data: bytes | str | Iterable[bytes], inputs: Iterable[str] = ()) -> None:
    """Write ``data`` to ``path`` atomically (text as UTF-8, line ends kept; or pieces of bytes, each
    written as it comes, so a large report is never whole in memory). OutputError on failure."""
    refuse_inputs(path, inputs)
    payload: Iterable[bytes] = (
        (data.encode("utf-8"),) if isinstance(data, str) else (data,) if isinstance(data, bytes) else data
    )
    folder = os.path.dirname(path) or "."
    try:
        os.makedirs(folder, exist_ok=True)
        existing = os.stat(path) if os.path.exists(path) else None
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            raise OutputError("is not a regular file; refusing to replace it")
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    except OSError as error:
        raise OutputError(f"cannot write: {error.strerror or error}") from None
    try:
        with os.fdopen(handle, "wb") as file:
            for piece in payload:
                file.write(piece)
            file.flush()
            os.fsync(file.fileno())
        # mkstemp makes the file private; give it what the old file had, or what a new file gets
        os.chmod(temporary, stat.S_IMODE(existing.st_mode) if existing is not None else 0o666 & ~_umask())
        os.replace(temporary, path)
    except OSError as error:
        _discard(temporary)
        raise OutputError(f"cannot write: {error.strerror or error}") from None
    except BaseException:
        _discard(temporary)
        raise


def _discard(temporary: str) -> None:
    try:
        os.unlink(temporary)
    except OSError:
        pass


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
