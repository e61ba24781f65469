"""Partial JSON as the SDK stream helpers read a buffer that is still growing.

jiter's ``partial_mode=True`` (the Anthropic Python SDK) and the partial parser vendored in the
TypeScript SDKs read a prefix of a JSON text as far as it goes: open objects and arrays are closed,
a key without a value is left out, and an unfinished string is left out too (``strings="drop"``,
jiter's "on") or kept as far as it goes (``strings="keep"``, jiter's "trailing-strings"). Text
that is not a prefix of any JSON value (``}{``, trailing data, a bad character) raises
``PartialJSONError`` with the offset where it stops being one.

One pass over the text; called once per call, on its final buffer, never per fragment.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import orjson

_NUMBER_TOKEN = re.compile(r"-?[0-9.eE+-]*")
_WS = re.compile(r"[ \t\n\r]*")
_LITERALS = {"true": True, "false": False, "null": None}
#: jiter's recursion limit (``jiter`` 0.19.0, what anthropic 2.12.0 reads with): a value that starts
#: more than 201 levels deep raises ``ValueError("recursion limit exceeded …")``, also in partial mode
#: (201 unclosed ``[`` read, a 202nd raises). It also bounds this parser's own recursion.
_MAX_DEPTH = 201


class PartialJSONError(ValueError):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} at offset {offset}")
        self.offset = offset


class _Incomplete(Exception):
    """The text ended inside this value."""


class _Parser:
    def __init__(self, text: str, strings: Literal["drop", "keep"], stop_early: bool = False) -> None:
        self.text, self.strings, self.at, self.stop_early = text, strings, 0, stop_early

    def ws(self) -> None:
        self.at = _WS.match(self.text, self.at).end()  # type: ignore[union-attr]

    def value(self, depth: int) -> Any:
        self.ws()
        if self.at >= len(self.text):
            raise _Incomplete
        if depth >= _MAX_DEPTH:  # only a value that starts there: 201 open brackets and the end are read
            raise PartialJSONError("recursion limit exceeded", self.at)
        char = self.text[self.at]
        if char == "{":
            return self.obj(depth)
        if char == "[":
            return self.arr(depth)
        if char == '"':
            return self.string()
        if char == "-" or char.isdigit():
            match = _NUMBER_TOKEN.match(self.text, self.at)
            assert match is not None
            try:
                number = orjson.loads(match.group())
            except orjson.JSONDecodeError:
                if match.end() == len(self.text):
                    self.at = len(self.text)
                    raise _Incomplete from None  # "1." or "-" at the end: the number is still coming
                raise PartialJSONError("invalid number", self.at) from None
            self.at = match.end()
            return number
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, self.at):
                self.at += len(word)
                return literal
            rest = self.text[self.at :]
            if word.startswith(rest):
                self.at = len(self.text)
                raise _Incomplete
        raise PartialJSONError(f"unexpected character {char!r}", self.at)

    def string(self) -> str:
        start = self.at
        end = self.at + 1
        text = self.text
        while True:
            quote = text.find('"', end)
            if quote < 0:
                self.at = len(text)
                if self.strings == "keep":
                    raise _IncompleteString(_close_string(text[start:]))
                raise _Incomplete
            backslashes = 0
            while text[quote - 1 - backslashes] == "\\":
                backslashes += 1
            if backslashes % 2 == 0:
                break
            end = quote + 1
        self.at = quote + 1
        try:
            return orjson.loads(text[start : self.at])  # type: ignore[no-any-return]
        except orjson.JSONDecodeError:
            raise PartialJSONError("invalid string", start) from None

    def obj(self, depth: int) -> dict[str, Any]:
        self.at += 1
        out: dict[str, Any] = {}
        while True:
            self.ws()
            if self.at >= len(self.text):
                raise _Partial(out)
            if self.text[self.at] == "}":
                self.at += 1
                return out
            if out and self.text[self.at] == ",":
                self.at += 1
                self.ws()
                if self.at >= len(self.text):
                    raise _Partial(out)
            if self.text[self.at] != '"':
                raise PartialJSONError("expected a key", self.at)
            try:
                key = self.string()
            except (_Incomplete, _IncompleteString):
                raise _Partial(out) from None
            self.ws()
            if self.at >= len(self.text):
                raise _Partial(out)
            if self.text[self.at] != ":":
                raise PartialJSONError("expected ':'", self.at)
            self.at += 1
            try:
                out[key] = self.value(depth + 1)
            except _Partial as partial:
                out[key] = partial.value
                raise _Partial(out) from None
            except _IncompleteString as partial:
                out[key] = partial.value
                raise _Partial(out) from None
            except _Incomplete:
                raise _Partial(out) from None
            self.ws()
            if self.at < len(self.text) and self.text[self.at] not in ",}":
                if self.stop_early:
                    raise _Partial(out)
                raise PartialJSONError("expected ',' or '}'", self.at)

    def arr(self, depth: int) -> list[Any]:
        self.at += 1
        out: list[Any] = []
        while True:
            self.ws()
            if self.at >= len(self.text):
                raise _Partial(out)
            if self.text[self.at] == "]":
                self.at += 1
                return out
            if out and self.text[self.at] == ",":
                self.at += 1
            try:
                out.append(self.value(depth + 1))
            except _Partial as partial:
                out.append(partial.value)
                raise _Partial(out) from None
            except _IncompleteString as partial:
                out.append(partial.value)
                raise _Partial(out) from None
            except _Incomplete:
                raise _Partial(out) from None
            self.ws()
            if self.at < len(self.text) and self.text[self.at] not in ",]":
                if self.stop_early:
                    raise _Partial(out)
                raise PartialJSONError("expected ',' or ']'", self.at)


class _Partial(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class _IncompleteString(Exception):
    def __init__(self, value: str) -> None:
        self.value = value


def _close_string(fragment: str) -> str:
    body = fragment[1:]
    if body.endswith("\\") and (len(body) - len(body.rstrip("\\"))) % 2:
        body = body[:-1]
    try:
        return orjson.loads('"' + body + '"')  # type: ignore[no-any-return]
    except orjson.JSONDecodeError:
        return body


_NOTHING: Any = type("Nothing", (), {"__repr__": lambda self: "NOTHING"})()


def partial_parse(
    text: str, strings: Literal["drop", "keep"] = "drop", trailing: bool = False, blank_ok: bool = True
) -> Any:
    """The value a partial reader sees in ``text``; ``NOTHING`` when it holds no value yet.

    ``trailing``: jiter's partial mode: reading stops, without an error, where a value is followed
    by anything but ``,`` or a closing bracket (text after the first whole value included);
    ``blank_ok`` False: a text of only whitespace raises (jiter).
    """
    parser = _Parser(text, strings, stop_early=trailing)
    if not blank_ok and not text.strip(" \t\n\r"):
        raise PartialJSONError("EOF while parsing a value", len(text))
    try:
        value = parser.value(0)
    except _Partial as partial:
        return partial.value
    except _IncompleteString as partial:
        return partial.value
    except _Incomplete:
        return _NOTHING
    parser.ws()
    if parser.at < len(text) and not trailing:
        raise PartialJSONError("trailing characters", parser.at)
    return value


NOTHING = _NOTHING
