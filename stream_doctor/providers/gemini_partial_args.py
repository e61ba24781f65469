"""Vertex AI streamed function-call arguments (``partialArgs``) written out as JSON text, piece by piece.

A streamed call sends its arguments as pieces ``{jsonPath, stringValue|numberValue|boolValue|nullValue,
willContinue?}`` (python-genai ``PartialArg``), in document order; a string may come in several
pieces, each but the last with ``willContinue``. ``StreamedArguments.place`` turns each piece into
the JSON text it adds, so the accumulator joins and parses the arguments once like any provider's.
What cannot be placed is recorded as a ``PartialArgUnplaceable`` fact, never guessed; SD523 words it.
"""

from __future__ import annotations

import re
from json.encoder import encode_basestring
from typing import Any, Callable

import orjson

from stream_doctor.capture.problem_facts import PartialArgUnplaceable, SplitString, Unplaceable

_SEGMENT = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\[\"((?:[^\"\\]|\\.)*)\"\]")
PathKey = tuple[str | int, ...]

#: The value fields of a piece; exactly one must be present.
VALUE_FIELDS = ("stringValue", "numberValue", "boolValue", "nullValue")

#: How a scalar value field is checked and written (a string is written by ``place`` itself: it
#: may continue in the next piece). A value of the wrong type is written as null and recorded.
SCALARS: dict[str, tuple[Callable[[Any], bool], Callable[[Any], str]]] = {
    "numberValue": (lambda v: type(v) in (int, float), lambda v: orjson.dumps(v).decode()),
    "boolValue": (lambda v: type(v) is bool, lambda v: "true" if v else "false"),
    "nullValue": (lambda v: True, lambda v: "null"),  # "NULL_VALUE"
}


def parse_path(path: str) -> PathKey | None:
    """An RFC 9535 normalized path (``$.recipe.steps[0]``, ``$['a b']``) as its segments; None if invalid."""
    if not path.startswith("$"):
        return None
    segments: list[str | int] = []
    at = 1
    while at < len(path):
        match = _SEGMENT.match(path, at)
        if match is None:
            return None
        member, index, single, double = match.groups()
        if member is not None:
            segments.append(member)
        elif index is not None:
            segments.append(int(index))
        else:
            quoted = single if single is not None else double
            try:
                segments.append(orjson.loads('"' + quoted.replace("\\'", "'") + '"'))
            except orjson.JSONDecodeError:
                return None
        at = match.end()
    return tuple(segments)


def show_path(path: PathKey) -> str:
    """A path's segments as one normalized path text: ``$.recipe.steps[0]``."""
    return "$" + "".join(f"[{s}]" if type(s) is int else f".{s}" for s in path)


#: The most array elements one piece may skip and have filled with null; a piece that skips more is
#: not placed (each null is text the arguments hold, for an index that costs the capture a few bytes).
MAX_NULLS = 64


class _Container:
    __slots__ = ("array", "count", "keys", "segment")

    def __init__(self, array: bool, segment: str | int | None) -> None:
        self.array = array
        self.count = 0
        self.keys: set[str] = set()
        self.segment = segment


class _Unplaced(Exception):
    """A path step that cannot be taken: what was written so far stands, the value is dropped."""

    def __init__(self, why: Unplaceable, element: int | None = None, last: int | None = None) -> None:
        super().__init__(why)
        self.why, self.element, self.last = why, element, last
        self.written = ""  # the text the path wrote before the step that failed


class StreamedArguments:
    """Writes ``partialArgs`` pieces out as JSON text, in arrival order, without rebuilding the object.

    Each piece costs its own size: the open containers are a stack, and a piece only closes the
    containers it leaves and opens the ones it enters. What cannot be placed (a path that is not
    valid, a container already closed, a string never finished) is recorded in ``problems``.
    """

    __slots__ = ("stack", "open_string", "open_raw", "open_pieces", "paths", "string_pieces", "problems", "placing")

    def __init__(self) -> None:
        self.stack: list[_Container] = []
        self.open_string: PathKey | None = None  # a string value whose last piece said willContinue
        self.open_raw: str | None = None  # its jsonPath as sent, to recognise its next piece cheaply
        self.open_pieces: list[str] = []
        self.paths: dict[str, PathKey | None] = {}  # jsonPath text -> segments, parsed once
        self.string_pieces: dict[PathKey, list[str]] = {}  # strings that came in several pieces
        self.problems: list[PartialArgUnplaceable] = []
        self.placing: str | None = None  # the jsonPath of the piece being placed

    def place(self, piece: Any) -> str:
        """The JSON text one ``PartialArg`` adds; what cannot be placed is recorded in ``problems``."""
        # The hot path: the next piece of the string being streamed.
        if self.open_raw is not None and type(piece) is dict and piece.get("jsonPath") == self.open_raw:
            text = piece.get("stringValue")
            if type(text) is str and len(piece) == (3 if "willContinue" in piece else 2):
                self.open_pieces.append(text)
                if piece.get("willContinue") is True:
                    return encode_basestring(text)[1:-1]  # _escape, without a call per piece
                self.open_string = self.open_raw = None
                return _escape(text) + '"'
        if not isinstance(piece, dict):
            return self._problem("not-an-object", piece=piece)
        raw_path = piece.get("jsonPath")
        if not isinstance(raw_path, str):
            return self._problem("no-json-path", piece=piece)
        segments = self.paths.get(raw_path, ())
        if segments == ():
            segments = self.paths[raw_path] = parse_path(raw_path)
        if not segments:
            return self._problem("invalid-path", raw_path)
        values = tuple(k for k in VALUE_FIELDS if k in piece)
        if len(values) != 1:
            return self._problem("value-count", raw_path, values=values)
        kind = values[0]
        value = piece[kind]
        more = piece.get("willContinue") is True
        out = ""
        if self.open_string is not None:
            if segments == self.open_string and kind == "stringValue" and isinstance(value, str):
                self.string_pieces[segments].append(value)
                if not more:
                    self.open_string = self.open_raw = None
                    return _escape(value) + '"'
                return _escape(value)
            self._problem("string-not-continued", show_path(self.open_string))
            self.open_string = self.open_raw = None
            out = '"'
        self.placing = raw_path
        try:
            out += self._enter(segments)
        except _Unplaced as unplaced:
            self._problem(unplaced.why, raw_path, element=unplaced.element, last=unplaced.last)
            return out + unplaced.written
        if kind == "stringValue":
            if not isinstance(value, str):
                self._problem("value-type", raw_path, value_kind=kind)
                return out + "null"
            self.open_pieces = self.string_pieces[segments] = [value]
            if more:
                self.open_string, self.open_raw = segments, raw_path
                return out + '"' + _escape(value)
            return out + orjson.dumps(value).decode()
        fits, write = SCALARS[kind]
        if not fits(value):
            self._problem("value-type", raw_path, value_kind=kind)
            return out + "null"
        return out + write(value)

    def _enter(self, segments: PathKey) -> str:
        """The text that leaves the containers this path does not go through and enters the ones it does."""
        stack = self.stack
        out = ""
        if not stack:
            if type(segments[0]) is not str:
                raise _Unplaced("root-is-array")  # nothing written: the object is not opened
            stack.append(_Container(False, None))
            out = "{"
        depth = 1
        while depth < len(stack) and depth <= len(segments) - 1 and stack[depth].segment == segments[depth - 1]:
            depth += 1
        while len(stack) > depth:
            out += "]" if stack.pop().array else "}"
        last = len(segments) - 1
        for j in range(depth - 1, len(segments)):
            segment = segments[j]
            container = stack[-1]
            try:
                out += _STEPS[container.array, type(segment) is int](self, container, segment)
            except _Unplaced as unplaced:
                unplaced.written = out
                raise
            container.count += 1
            if j < last:
                stack.append(_Container(type(segments[j + 1]) is int, segment))
                out += "[" if stack[-1].array else "{"
        return out

    def _element(self, container: _Container, index: Any) -> str:
        if index < container.count:
            raise _Unplaced("element-closed", index)
        out = ""
        if index > container.count:
            skipped = index - container.count
            if skipped > MAX_NULLS:  # the index is a number the capture states: 10^8 would be 500 MB of nulls
                raise _Unplaced("elements-skipped-too-many", container.count, index - 1)
            self._problem("elements-skipped", self.placing, element=container.count, last=index - 1)
            out = ("," if container.count else "") + ",".join(("null",) * skipped)
            container.count = index
        return out + ("," if container.count else "")

    def _member(self, container: _Container, name: Any) -> str:
        if name in container.keys:
            raise _Unplaced("member-closed")
        container.keys.add(name)
        return ("," if container.count else "") + orjson.dumps(name).decode() + ":"

    def _problem(self, why: Unplaceable, path: str | None = None, **facts: Any) -> str:
        self.problems.append(PartialArgUnplaceable(why, path=path, **facts))
        return ""

    def finish(self) -> str:
        """The text that closes whatever is still open when the call ends."""
        out = ""
        if self.open_string is not None:
            self._problem("string-not-finished", show_path(self.open_string))
            self.open_string = self.open_raw = None
            out = '"'
        while self.stack:
            out += "]" if self.stack.pop().array else "}"
        return out

    def split_strings(self) -> tuple[SplitString, ...]:
        """The string values that came in several pieces, in the order they began."""
        return tuple(
            SplitString(show_path(path), tuple(pieces))
            for path, pieces in self.string_pieces.items()
            if len(pieces) > 1
        )


def _wrong_step(why: Unplaceable) -> Callable[[StreamedArguments, _Container, Any], str]:
    def step(arguments: StreamedArguments, container: _Container, segment: Any) -> str:
        raise _Unplaced(why)

    return step


#: (the container is an array, the segment is an index) -> how the path steps into it.
_STEPS: dict[tuple[bool, bool], Callable[[StreamedArguments, _Container, Any], str]] = {
    (True, True): StreamedArguments._element,
    (False, False): StreamedArguments._member,
    (True, False): _wrong_step("member-of-array"),
    (False, True): _wrong_step("index-of-object"),
}


def _escape(text: str) -> str:
    """A string's JSON text without its quotes (the C encoder: a third of orjson.dumps + decode here)."""
    return encode_basestring(text)[1:-1]
