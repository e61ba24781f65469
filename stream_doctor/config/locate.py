"""Where the configuration governing a path is, found without reading the configuration module.

A replay with no configuration file above it (the usual case) should not pay for importing the
configuration's parser and validators; ``config.file`` reads and validates what this finds.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Configuration files, nearest first; a pyproject.toml counts only with a [tool.stream-doctor] table.
FILE_NAMES = ("stream-doctor.toml", "pyproject.toml")

__all__ = ["FILE_NAMES", "find", "nearest"]


def nearest(target: str) -> str | None:
    """The configuration that governs ``target`` (a capture or a folder), as ruff finds it: the
    nearest file at or above the target's own folder, not the working directory's."""
    folder = target if os.path.isdir(target) else (os.path.dirname(target) or ".")
    return find(folder)


def find(start: str) -> str | None:
    """The nearest configuration file at or above ``start``."""
    folder = Path(start).resolve()
    for candidate in (folder, *folder.parents):
        for name in FILE_NAMES:
            path = candidate / name
            if path.is_file() and (name != "pyproject.toml" or _has_table(path)):
                return _shown(path)
    return None


def _has_table(path: Path) -> bool:
    from stream_doctor.util.opener import UnreadableFile, read_text

    try:
        text = read_text(str(path))
    except UnreadableFile:
        return False  # someone else's unreadable pyproject.toml is not ours to report
    if "stream-doctor" not in text or not _may_define_table(text):
        return False  # no [tool.stream-doctor] table can be written without its name
    import tomllib

    try:
        document = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return False  # someone else's broken pyproject.toml is not ours to report
    tool = document.get("tool")
    return isinstance(tool, dict) and "stream-doctor" in tool


def _may_define_table(text: str) -> bool:
    """Whether ``text`` has a line that could define ``tool.stream-doctor`` in TOML; when none does,
    the file is not parsed (tomllib costs a few milliseconds, and a project's own pyproject.toml
    names stream-doctor in its dependencies or scripts without configuring it).

    Such a line, its whitespace and quotes removed, starts the table's header
    (``[tool.stream-doctor…``, ``[tool]``) or a key (``tool.stream-doctor…``, ``tool = {…}``). An
    escape (``\\u``) in a quoted key could spell the name, so a text with one is parsed too.
    """
    if "\\u" in text or "\\U" in text:
        return True
    for line in text.splitlines():
        compact = "".join(line.split()).replace('"', "").replace("'", "")
        if compact.startswith(
            ("[tool.stream-doctor", "[[tool.stream-doctor", "tool.stream-doctor", "[tool]", "[[tool]", "tool=")
        ):
            return True
    return False


def _shown(path: Path) -> str:
    """A path as reports show it: relative to the working directory."""
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive, on Windows
        return str(path)
