"""``.gitignore`` for ``check``: folders and globs skip what git ignores, as ruff does.

Every ``.gitignore`` from a path's folder up to the repository's root (the folder holding
``.git``) applies, each relative to its own folder, the nearer one deciding (so a nested file can
re-include with ``!``). Outside a repository nothing is ignored. Files named on the command line
are always replayed; ``--no-respect-gitignore`` or ``respect-gitignore = false`` turns this off.

A line is read as gitignore(5) says: blank lines and ``#`` comments say nothing, trailing spaces
go unless escaped, ``!`` re-includes, a trailing ``/`` matches folders only, a ``/`` at the start
or in the middle anchors the pattern to the file's folder, and a pattern that matches a folder
matches everything in it. The patterns are ``globs.Glob`` in the ``gitignore`` dialect, never
regexes: a ``.gitignore`` comes with the repository being checked (pathspec's regexes took 9 s on
``*a*a*a*a*a*a*b`` against a 60-character name).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from stream_doctor.config.globs import GITIGNORE, Glob


class GitIgnored:
    """``GitIgnored()(path)``: is this path (relative to the working directory) ignored by git?"""

    def __call__(self, path: str) -> bool:
        absolute = Path(os.path.abspath(path))
        root = _repository_root(str(absolute.parent))
        if root is None:
            return False
        folder = absolute.parent
        is_dir = absolute.is_dir()
        while True:
            patterns = _patterns(str(folder))
            if patterns:
                decision = decide(patterns, absolute.relative_to(folder).as_posix(), is_dir)
                if decision is not None:  # this file says something about the path
                    return decision
            if str(folder) == root or folder.parent == folder:
                return False
            folder = folder.parent


@dataclass(frozen=True)
class IgnorePattern:
    glob: Glob
    negated: bool = False
    folders_only: bool = False
    anchored: bool = False  # compared with the path relative to the file's folder, not with the name

    def matches(self, relative: str, is_dir: bool) -> bool:
        if self.folders_only and not is_dir:
            return False
        return self.glob.fullmatch(relative if self.anchored else relative.rsplit("/", 1)[-1])


def parse(lines: list[str]) -> tuple[IgnorePattern, ...]:
    """The patterns of a ``.gitignore``'s lines, in order."""
    patterns = []
    for line in lines:
        kept = line.rstrip(" ")  # at once: a line of a million spaces is one copy, not a million
        line = kept + " " if kept.endswith("\\") and len(kept) < len(line) else kept
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        pattern = line[1:] if negated else line
        folders_only = pattern.endswith("/")
        pattern = pattern.rstrip("/")
        if pattern:  # "/" alone matches nothing
            glob = Glob(pattern.removeprefix("/"), GITIGNORE)
            patterns.append(IgnorePattern(glob, negated, folders_only, anchored="/" in pattern))
    return tuple(patterns)


def decide(patterns: tuple[IgnorePattern, ...], relative: str, is_dir: bool) -> bool | None:
    """Ignored (True), re-included (False), or not mentioned (None), by one file's patterns.

    The last pattern that matches the path decides, as git does while it walks down to it: a folder
    on the way that is ignored ignores everything in it ("It is not possible to re-include a file
    if a parent directory of that file is excluded").
    """
    parts = relative.split("/")
    if any(_last(patterns, "/".join(parts[:depth]), True) for depth in range(1, len(parts))):
        return True
    return _last(patterns, relative, is_dir)


def _last(patterns: tuple[IgnorePattern, ...], relative: str, is_dir: bool) -> bool | None:
    for pattern in reversed(patterns):
        if pattern.matches(relative, is_dir):
            return not pattern.negated
    return None


@lru_cache(maxsize=4096)
def _repository_root(folder: str) -> str | None:
    current = Path(folder)
    for candidate in (current, *current.parents):
        if (candidate / ".git").exists():
            return str(candidate)
    return None


@lru_cache(maxsize=4096)
def _patterns(folder: str) -> tuple[IgnorePattern, ...]:
    from stream_doctor.util.opener import UnreadableFile, read_text

    try:
        text = read_text(os.path.join(folder, ".gitignore"), errors="replace")
    except UnreadableFile:
        return ()  # none, or not a file git would read either
    return parse(text.splitlines())
