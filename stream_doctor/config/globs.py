"""Path patterns of the configuration (``exclude``, ``per-path-ignores``, ``expect`` …) and of ``.gitignore``.

A pattern is relative to the configuration file's folder and uses ``/``. One without a ``/``
matches a file or folder name anywhere (``"*.gz"``, ``"legacy"``); one with a ``/`` matches the
whole relative path. ``*`` and ``?`` stay inside one path segment, ``**`` spans segments,
``[abc]``, ``[!abc]``, ``[a-z]`` and ``{a,b}`` as in a shell (a bracket never matches ``/``).

Patterns come from strangers (a fork's ``pyproject.toml``, a ``.gitignore``), so they are never
handed to ``re``: a backtracking regex takes minutes on ``*a*a*a…*b`` against a 60-character path
(pathspec's gitignore regexes too: 9 s with six stars, eight times longer per star). A pattern
compiles to a small automaton that reads a path once, its state being the set of places the
pattern may be at (a Thompson NFA), with the sets met so far cached as DFA states: time is
linear in the path's length times the pattern's, whatever the pattern, and memory linear in the
pattern's (each step follows the jumps from the places it reached once; the cache holds at most
``MAX_CACHED_PLACES`` places). A run of wildcards that means one (``***``, ``**/**/``) is read as
that one, so 10,000 stars cost what one does. A pattern that cannot
mean anything (a reversed range ``[z-a]``) is a ``GlobError``, for the caller to name its source.

``GITIGNORE`` reads a pattern as gitignore(5) does (``\\`` escapes, no braces, ``**`` special only
as a whole segment); ``gitignore.py`` adds the rest of that format (``!``, a trailing ``/``,
anchoring).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

Dialect = Literal["config", "gitignore"]
CONFIG: Dialect = "config"
GITIGNORE: Dialect = "gitignore"

#: DFA states cached per pattern before the cache starts again (each is a set of NFA places).
MAX_CACHED_STATES = 512
#: NFA places those states may hold together: a long pattern's sets are long, and the cache is memory.
MAX_CACHED_PLACES = 1 << 16


class GlobError(ValueError):
    """A pattern that matches nothing sensible; the message says why, the caller says where it came from."""


@dataclass(frozen=True)
class Glob:
    pattern: str
    dialect: Dialect = CONFIG

    @cached_property
    def _machine(self) -> _Machine:
        pattern = self.pattern.strip("/").removeprefix("./") if self.dialect == CONFIG else self.pattern
        return _Machine(compile_nodes(parse(pattern, self.dialect)))

    def check(self) -> Glob:
        """The glob itself, once its pattern is known to compile (GlobError otherwise)."""
        self._machine  # noqa: B018 - compiling is the check
        return self

    @property
    def by_name(self) -> bool:
        return "/" not in self.pattern.strip("/")

    def matches(self, relative: str) -> bool:
        """Does the pattern match this path (relative to the pattern's folder, ``/``-separated)?"""
        return self.fullmatch(relative.rsplit("/", 1)[-1] if self.by_name else relative)

    def fullmatch(self, text: str) -> bool:
        """Does the pattern match the whole of ``text``, a name or a path alike?"""
        return self._machine.fullmatch(text)


# -- parsing: a pattern becomes a sequence of nodes ------------------------------------------------

# ("lit", char) | ("one",) any character but "/" | ("class", negated, ((low, high), …)) |
# ("star",) any run without "/" | ("any",) any run | ("dirs",) zero or more "name/" |
# ("alt", (nodes, nodes, …))
Node = tuple[Any, ...]


def parse(pattern: str, dialect: Dialect = CONFIG) -> list[Node]:
    """The nodes of ``pattern``. GlobError for a reversed range."""
    if dialect == GITIGNORE:
        return _parse_gitignore(pattern)
    return _parse_config(pattern)


def _parse_config(pattern: str) -> list[Node]:
    nodes: list[Node] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if pattern.startswith("**/", i):
            nodes.append(("dirs",))
            i += 3
        elif pattern.startswith("**", i):
            nodes.append(("any",))
            i += 2
        elif char == "*":
            nodes.append(("star",))
            i += 1
        elif char == "?":
            nodes.append(("one",))
            i += 1
        elif char == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            nodes.append(_bracket(pattern, pattern[i + 1 : end]))
            i = end + 1
        elif char == "{" and "}" in pattern[i:]:
            end = pattern.index("}", i)
            nodes.append(("alt", tuple(tuple(_parse_config(part)) for part in pattern[i + 1 : end].split(","))))
            i = end + 1
        else:
            nodes.append(("lit", char))
            i += 1
    return _collapsed(nodes)


def _parse_gitignore(pattern: str) -> list[Node]:
    """gitignore(5): "**" is special only as a whole segment; other consecutive asterisks are regular ones."""
    nodes: list[Node] = []
    segments = pattern.split("/")
    last = len(segments) - 1
    for number, segment in enumerate(segments):
        if segment == "**":
            # leading "**/" and inner "/**/": zero or more folders; trailing "/**": everything inside
            nodes.append(("dirs",) if number < last else ("any",))
            continue
        nodes.extend(_parse_segment(segment))
        if number < last:
            nodes.append(("lit", "/"))
    return _collapsed(nodes)


# Two wildcards in a row that match what one of them does: "star" is [^/]*, "any" .*, "dirs" (.*/)?
# ("star" then "dirs" is neither, and stays two nodes).
_ONE_OF_TWO: dict[tuple[str, str], Node] = {
    ("star", "star"): ("star",),
    ("dirs", "dirs"): ("dirs",),
    ("any", "any"): ("any",),
    ("any", "star"): ("any",),
    ("star", "any"): ("any",),
    ("any", "dirs"): ("any",),
    ("dirs", "any"): ("any",),
}


def _collapsed(nodes: list[Node]) -> list[Node]:
    """``nodes`` with each run of wildcards that one wildcard matches the same as read as that one
    (``***`` is ``*``): a pattern of 10,000 stars compiles to one loop, not 10,000 nested ones."""
    out: list[Node] = []
    for node in nodes:
        merged = _ONE_OF_TWO.get((out[-1][0], node[0])) if out else None
        if merged is None:
            out.append(node)
        else:
            out[-1] = merged
    return out


def _parse_segment(segment: str) -> list[Node]:
    nodes: list[Node] = []
    i, n = 0, len(segment)
    while i < n:
        char = segment[i]
        if char == "\\" and i + 1 < n:
            nodes.append(("lit", segment[i + 1]))
            i += 2
        elif char == "*":
            nodes.append(("star",))
            i += 1
        elif char == "?":
            nodes.append(("one",))
            i += 1
        elif char == "[":
            start = i + 1 + (segment[i + 1 : i + 2] in ("!", "^"))
            end = segment.find("]", start + 1)  # a "]" first in the brackets is one of its characters
            if end < 0:
                nodes.append(("lit", "["))
                i += 1
                continue
            nodes.append(_bracket(segment, segment[i + 1 : end], reversed_ok=True))
            i = end + 1
        else:
            nodes.append(("lit", char))
            i += 1
    return nodes


def _bracket(pattern: str, body: str, reversed_ok: bool = False) -> Node:
    """``[…]``: its characters and ranges; ``!`` (or ``^``) first negates it."""
    negated = body[:1] in ("!", "^")
    body = body[1:] if negated else body
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            low, high = body[i], body[i + 2]
            if low > high and not reversed_ok:
                raise GlobError(f"the range {low}-{high} in [{body}] runs backwards, so it matches nothing")
            ranges.append((low, high))  # git's wildmatch lets a reversed range match nothing
            i += 3
        else:
            ranges.append((body[i], body[i]))
            i += 1
    return ("class", negated, tuple(ranges))


# -- compiling: nodes become an NFA program --------------------------------------------------------

_CHAR, _SPLIT, _JMP, _MATCH = range(4)
_ONE: Node = ("one",)
_EVERY: Node = ("every",)  # any character, "/" included
_SLASH: Node = ("lit", "/")


@dataclass(frozen=True)
class Program:
    ops: tuple[tuple[int, Node | None, int, int], ...]  # (kind, what a _CHAR reads, jump, other jump)


def compile_nodes(nodes: list[Node]) -> Program:
    code: list[list[Any]] = []

    def emit(kind: int, what: Node | None = None, first: int = 0, second: int = 0) -> int:
        code.append([kind, what, first, second])
        return len(code) - 1

    def loop(what: Node) -> None:  # what*
        split = emit(_SPLIT)
        emit(_CHAR, what)
        emit(_JMP, None, split)
        code[split][2:] = [split + 1, len(code)]

    def sequence(items: tuple[Node, ...] | list[Node]) -> None:
        for node in items:
            kind = node[0]
            if kind in ("lit", "one", "class"):
                emit(_CHAR, node)
            elif kind == "star":
                loop(_ONE)
            elif kind == "any":
                loop(_EVERY)
            elif kind == "dirs":  # (?:.*/)?
                skip = emit(_SPLIT)
                loop(_EVERY)
                emit(_CHAR, _SLASH)
                code[skip][2:] = [skip + 1, len(code)]
            else:  # alt: split to each part, each part jumps to the end
                jumps = []
                for part in node[1][:-1]:
                    split = emit(_SPLIT)
                    sequence(part)
                    jumps.append(emit(_JMP))
                    code[split][2:] = [split + 1, len(code)]
                sequence(node[1][-1])
                for jump in jumps:
                    code[jump][2] = len(code)

    sequence(nodes)
    emit(_MATCH)
    return Program(tuple((kind, what, first, second) for kind, what, first, second in code))


def _reads(what: Node, char: str) -> bool:
    kind = what[0]
    if kind == "lit":
        return bool(char == what[1])
    if kind == "one":
        return char != "/"
    if kind == "every":
        return True
    inside = any(low <= char <= high for low, high in what[2])
    return char != "/" and inside != what[1]


class _Machine:
    """Runs a program over a text once; the sets of places met are cached as DFA states."""

    def __init__(self, program: Program) -> None:
        self.ops = program.ops
        self.match = len(self.ops) - 1
        self.start_places = self._follow([0])
        self._reset()

    def _follow(self, starts: list[int]) -> frozenset[int]:
        """The reading places reachable from ``starts`` without reading (splits and jumps followed),
        each place visited once: O(pattern) per step, however the jumps nest."""
        ops = self.ops
        seen: set[int] = set()
        found: set[int] = set()
        todo = starts[::-1]
        while todo:
            pc = todo.pop()
            if pc in seen:
                continue
            seen.add(pc)
            kind, _what, first, second = ops[pc]
            if kind == _SPLIT:
                todo += [second, first]
            elif kind == _JMP:
                todo.append(first)
            else:
                found.add(pc)
        return frozenset(found)

    def _reset(self) -> None:
        self.ids: dict[frozenset[int], int] = {}
        self.sets: list[frozenset[int]] = []
        self.edges: list[dict[str, int]] = []
        self.places = 0  # held by the cached sets together
        self.start = self._intern(self.start_places)

    def _intern(self, places: frozenset[int]) -> int:
        number = self.ids.get(places)
        if number is None:
            number = self.ids[places] = len(self.sets)
            self.sets.append(places)
            self.edges.append({})
            self.places += len(places)
        return number

    def fullmatch(self, text: str) -> bool:
        state = self.start
        for char in text:
            following = self.edges[state].get(char)
            if following is None:
                following = self._step(state, char)
            state = following
        return self.match in self.sets[state]

    def _step(self, state: int, char: str) -> int:
        ops = self.ops
        following = self._follow(
            [pc + 1 for pc in self.sets[state] if ops[pc][0] == _CHAR and _reads(ops[pc][1], char)]  # type: ignore[arg-type]
        )
        if len(self.sets) >= MAX_CACHED_STATES or self.places + len(following) > MAX_CACHED_PLACES:
            self._reset()  # a pattern whose sets keep growing: start the cache again
            return self._intern(following)
        number = self._intern(following)
        self.edges[state][char] = number
        return number
