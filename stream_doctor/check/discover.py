"""Which files ``check`` replays: files, folders (searched recursively) and globs.

Inside folders and glob matches a file is a capture when a capture reader's ``sniff`` recognises
its first bytes (gzip undone), never because of its name; everything else is counted as skipped.
A file named on the command line is always replayed, as ``replay`` would, so a typo or a broken
capture fails loudly instead of passing by unnoticed; only stream-doctor's own files (sidecars,
configuration) are set aside, and a sidecar stands for its capture.
"""

from __future__ import annotations

import glob
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from stream_doctor.capture import HEAD_SIZE, sniff_scores
from stream_doctor.capture._text import BOM
from stream_doctor.check import CheckError
from stream_doctor.check.result import SpecialFile
from stream_doctor.config.expectations import SIDECAR_SUFFIX, is_sidecar
from stream_doctor.config.file import FILE_NAMES

SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules"})  # and every folder whose name starts with "."
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class Discovery:
    captures: tuple[str, ...]  # relative to the working directory, "/"-separated, sorted
    skipped: tuple[str, ...]  # files looked at that are not captures, sorted
    special: tuple[SpecialFile, ...] = ()  # FIFOs, devices, sockets met in folders and globs: never opened, sorted


def discover(paths: Iterable[str], excluded: Callable[[str], bool] = lambda path: False) -> Discovery:
    """Expand ``paths`` into captures; a path that does not exist or a glob that matches nothing: CheckError."""
    captures: set[str] = set()
    skipped: set[str] = set()
    special: dict[str, SpecialFile] = {}

    def consider(path: str, tree: str) -> None:
        if excluded(path):
            return
        if _leaves(path, tree):  # its content is not the checked tree's, and may be anyone's
            special[path] = SpecialFile(path, "outside-link")
        elif not os.path.isfile(path):  # opening a FIFO would wait forever, a device read forever
            special[path] = SpecialFile(path, _kind(path))
        elif _own_file(path):
            skipped.add(path)
        elif looks_like_capture(path):
            captures.add(path)
        else:
            skipped.add(path)

    for given in paths:
        if os.path.isdir(given):
            tree = os.path.realpath(given)
            for path in _walk(given, excluded):
                consider(path, tree)
        elif os.path.exists(given):
            path = _relative(given)
            if is_sidecar(path) and os.path.isfile(path.removesuffix(SIDECAR_SUFFIX)):
                captures.add(path.removesuffix(SIDECAR_SUFFIX))  # pre-commit hands over an edited sidecar
            elif is_sidecar(path) and os.path.isdir(path.removesuffix(SIDECAR_SUFFIX)):
                # a session folder's sidecar: the folder's captures (directly in it) stand for it
                folder = path.removesuffix(SIDECAR_SUFFIX)
                tree = os.path.realpath(folder)
                for inside in _files_directly_in(folder):
                    consider(inside, tree)
            elif _own_file(path):
                skipped.add(path)
            else:
                captures.add(path)
        elif _GLOB_CHARS & set(given):
            matches = sorted(glob.glob(given, recursive=True))
            if not matches:
                raise CheckError(f"{given}: the pattern matches no file")
            tree = os.path.realpath(_fixed_folder(given))
            for match in matches:
                if os.path.isdir(match):
                    for path in _walk(match, excluded):
                        consider(path, tree)
                elif os.path.exists(match):
                    consider(_relative(match), tree)
        else:
            raise CheckError(f"{given}: no such file or folder")
    listed = tuple(special[path] for path in sorted(special))
    return Discovery(tuple(sorted(captures)), tuple(sorted(skipped - captures)), listed)


def session_members(folder: str, excluded: Callable[[str], bool] = lambda path: False) -> tuple[str, ...]:
    """The captures directly in a session's folder (``capture.session`` reads no deeper), found as
    ``discover`` finds them in a folder: by content, excluded and non-regular files left out, sorted."""
    tree = os.path.realpath(folder)
    return tuple(
        path
        for path in _files_directly_in(folder)
        if not excluded(path)
        and not _leaves(path, tree)
        and os.path.isfile(path)
        and not _own_file(path)
        and looks_like_capture(path)
    )


def _files_directly_in(folder: str) -> list[str]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    relative = _relative(folder)
    return [_join(relative, name) for name in names if not name.startswith(".")]


def _leaves(path: str, tree: str) -> bool:
    """Does ``path`` resolve, through symbolic links, to a file outside ``tree`` (a real path)?"""
    target = os.path.realpath(path)
    return target != tree and not target.startswith(tree.rstrip(os.sep) + os.sep)


def _fixed_folder(pattern: str) -> str:
    """The folder a glob's matches are under: its segments before the first wildcard."""
    parts = []
    for part in pattern.replace(os.sep, "/").split("/"):
        if _GLOB_CHARS & set(part):
            break
        parts.append(part)
    return "/".join(parts) or ("/" if pattern.startswith("/") else ".")


def _kind(path: str) -> str:
    """What a path that is not a regular file is (``fifo``, ``socket`` …), from ``stat`` (never opened)."""
    from stream_doctor.capture.limits import file_kind

    try:
        return file_kind(os.stat(path).st_mode) or "other"
    except OSError:  # a link to nothing, or a file gone since the folder was listed
        return "broken-link" if os.path.islink(path) else "other"


def looks_like_capture(path: str) -> bool:
    """Does a capture reader recognise the start of this file? Unreadable or corrupt gzip: yes, so it fails loudly."""
    from stream_doctor.util.opener import UnreadableFile, opened

    try:
        with opened(path, None) as file:
            head = file.read(HEAD_SIZE)
    except (UnreadableFile, OSError):
        return True
    return head_looks_like_capture(head)


def head_looks_like_capture(head: bytes) -> bool:
    """``looks_like_capture`` for the first bytes of a file (``scan`` reads them through fsspec)."""
    if head.startswith(b"\x1f\x8b"):
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, HEAD_SIZE)
        except zlib.error:
            return True
    scores = sniff_scores(head)
    best = max(scores, key=lambda name: scores[name])
    if scores[best] == 0:
        return False
    if best == "json":
        # The array reader takes anything that starts with "[" (right for a file it is told to
        # read); in a folder, TOML that opens with a [table] would pass too. Events are objects.
        inside = head.removeprefix(BOM).lstrip()[1:].lstrip()
        return inside[:1] in (b"{", b"")
    return True


def _walk(folder: str, excluded: Callable[[str], bool]) -> Iterable[str]:
    for root, folders, files in os.walk(folder):
        relative_root = _relative(root)
        folders[:] = sorted(
            name
            for name in folders
            if not name.startswith(".") and name not in SKIPPED_FOLDERS and not excluded(_join(relative_root, name))
        )
        for name in sorted(files):
            path = _join(relative_root, name)
            if os.path.exists(path):  # not a dangling link; `consider` sets aside what is not a regular file
                yield path


def _own_file(path: str) -> bool:
    return is_sidecar(path) or path.rsplit("/", 1)[-1] in FILE_NAMES


def _join(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"


def _relative(path: str) -> str:
    """Reports show paths relative to the working directory, with "/"."""
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive, on Windows
        return Path(path).as_posix()
