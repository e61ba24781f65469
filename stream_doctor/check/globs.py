"""Path patterns of the configuration (``exclude``, ``per-path-ignores``, ``expect`` …), as ruff reads them.

A pattern is relative to the configuration file's folder and uses ``/``. One without a ``/``
matches a file or folder name anywhere (``"*.gz"``, ``"legacy"``); one with a ``/`` matches the
whole relative path. ``*`` and ``?`` stay inside one path segment, ``**`` spans segments,
``[abc]`` and ``{a,b}`` as in a shell.
"""

from __future__ import annotations

import re
from functools import cached_property

from stream_doctor.records import dataclass


@dataclass(frozen=True)
class Glob:
    pattern: str

    @cached_property
    def _regex(self) -> re.Pattern[str]:
        return re.compile(translate(self.pattern.strip("/").removeprefix("./")))

    @property
    def by_name(self) -> bool:
        return "/" not in self.pattern.strip("/")

    def matches(self, relative: str) -> bool:
        """Does the pattern match this path (relative to the pattern's folder, ``/``-separated)?"""
        target = relative.rsplit("/", 1)[-1] if self.by_name else relative
        return self._regex.fullmatch(target) is not None


def translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif char == "{" and "}" in pattern[i:]:
            end = pattern.index("}", i)
            out.append("(?:" + "|".join(translate(part) for part in pattern[i + 1 : end].split(",")) + ")")
            i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)
