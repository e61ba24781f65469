"""The partial JSON parser vendored in the Anthropic TypeScript SDK, as the SDK reads a tool call's buffer.

Follows ``@anthropic-ai/sdk`` 1.12.0 ``_vendor/partial-json-parser/parser.js``: the text is cut into
tokens (``None`` when it holds anything but JSON tokens and whitespace outside its strings); a
dangling string (an unclosed ``"`` runs to the end), a trailing ``:``, a number the end of the text
cuts or that is not a JSON number, and a key still waiting for its value are stripped from the end;
the open brackets are closed; and the result goes to ``JSON.parse``, which raises on whatever is
still not JSON. Unlike ``_partial`` (jiter's reading), nothing after a whole value is refused
before that: ``{…}"}`` loses its dangling ``"}`` and parses.

One pass over the text; called once per call, on its final buffer. ``JSON.parse`` (V8) reads any depth, so
a text nested deeper than Python's ``json`` reads safely is read by a loop over the tokens (``_parsed``).
"""

from __future__ import annotations

import json
import re
from typing import Any

_LITERALS = ("true", "false", "null")
_JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_WHITESPACE = " \t\n\r"
_PUNCTUATION = {"{": "brace", "}": "brace", "[": "paren", "]": "paren", ":": "separator", ",": "delimiter"}


class VendoredParseError(ValueError):
    """``JSON.parse`` would throw (a ``SyntaxError``) on what the parser made of the text."""


def _tokenize(text: str) -> list[tuple[str, str, bool]] | None:
    """(type, value, unterminated) tokens; None when the text holds something that is not a JSON token."""
    tokens: list[tuple[str, str, bool]] = []
    at, end = 0, len(text)
    while at < end:
        char = text[at]
        kind = _PUNCTUATION.get(char)
        if kind is not None:
            tokens.append((kind, char, False))
            at += 1
        elif char == '"':
            start = close = at + 1
            while True:  # a quote closes the string only after an even number of backslashes
                close = text.find('"', close)
                if close == -1:
                    break
                backslashes = 0
                back = close - 1
                while back >= start and text[back] == "\\":
                    backslashes += 1
                    back -= 1
                if backslashes % 2 == 0:
                    break
                close += 1
            if close == -1:  # a dangling string runs to the end and is dropped
                at = end
            else:
                tokens.append(("string", text[start:close], False))
                at = close + 1
        elif char in _WHITESPACE:
            at += 1
        elif char.isascii() and (char.isdigit() or char in "-."):
            value = ""
            if char == "-":
                value, at = "-", at + 1
            while at < end:
                char = text[at]
                if not (
                    (char.isascii() and char.isdigit()) or char in ".eE" or (char in "-+" and value[-1:] in ("e", "E"))
                ):
                    break
                value += char
                at += 1
            tokens.append(("number", value, at == end))
        elif char.isascii() and char.isalpha():
            start = at
            while at < end and text[at].isascii() and text[at].isalpha():
                at += 1
            word = text[start:at]
            if word in _LITERALS:
                tokens.append(("name", word, False))
            elif not (
                any(literal != word and literal.startswith(word) for literal in _LITERALS)
                and not text[at:].strip(_WHITESPACE)
            ):
                return None
        else:
            return None
    return tokens


def _strip(tokens: list[tuple[str, str, bool]]) -> list[tuple[str, str, bool]]:
    opened: list[str] = []
    for kind, value, _ in tokens:
        if kind in ("brace", "paren"):
            if value in "{[":
                opened.append(value)
            elif opened:
                opened.pop()
    innermost = opened[-1] if opened else None
    length = len(tokens)
    while length > 0:
        kind, value, unterminated = tokens[length - 1]
        if kind == "separator":
            length -= 1
            continue
        if kind == "number":
            if unterminated or not _JSON_NUMBER.fullmatch(value):
                length -= 1
                continue
        elif kind == "string":
            before = tokens[length - 2] if length >= 2 else None
            if innermost == "{" and before is not None and (before[0] == "delimiter" or before[:2] == ("brace", "{")):
                length -= 1  # a key without its value yet
                continue
        elif kind == "delimiter":
            length -= 1
        break
    return tokens[:length]


def _unstrip(tokens: list[tuple[str, str, bool]]) -> list[tuple[str, str, bool]] | None:
    tail: list[str] = []
    for kind, value, _ in tokens:
        if kind not in ("brace", "paren"):
            continue
        if value == "{":
            tail.append("}")
        elif value == "[":
            tail.append("]")
        elif (tail.pop() if tail else None) != value:
            return None
    closers = [("brace" if closer == "}" else "paren", closer, False) for closer in reversed(tail)]
    return tokens + closers


def _generate(tokens: list[tuple[str, str, bool]]) -> str:
    parts: list[str] = []
    previous_scalar = False
    for kind, value, _ in tokens:
        scalar = kind in ("string", "number", "name")
        if previous_scalar and scalar:
            parts.append(" ")  # adjacent scalars stay apart, so `12 3` still fails the strict parse
        parts.append(f'"{value}"' if kind == "string" else value)
        previous_scalar = scalar
    return "".join(parts)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def vendored_partial_parse(text: str) -> Any:
    """``partialParse(text)``: the value, or ``VendoredParseError`` where ``JSON.parse`` throws."""
    tokens = _tokenize(text)
    completed = _unstrip(_strip(tokens)) if tokens is not None else None
    if completed is not None and _depth(completed) > _RECURSIVE_DEPTH:
        return _parsed(completed)
    source = _generate(completed) if completed is not None else text  # JS: an empty token list is truthy
    try:
        return json.loads(source, parse_constant=_reject_constant)
    except RecursionError:  # text with a character no JSON token has, nested deep: JSON.parse throws on it
        raise VendoredParseError("not JSON (nested deeper than the checker reads)") from None
    except ValueError as error:  # JSONDecodeError included
        raise VendoredParseError(str(error)) from None


#: Nesting Python's ``json`` reads without nearing the interpreter's recursion limit; V8's ``JSON.parse``
#: has no depth limit (``partialParse("[".repeat(100000))`` is 100,000 arrays in Node 20), so a text
#: nested deeper is read by ``_parsed``, a loop.
_RECURSIVE_DEPTH = 200


def _depth(tokens: list[tuple[str, str, bool]]) -> int:
    depth = deepest = 0
    for kind, value, _ in tokens:
        if kind in ("brace", "paren"):
            depth += 1 if value in "{[" else -1
            deepest = max(deepest, depth)
    return deepest


def _scalar(kind: str, value: str) -> Any:
    if kind == "string":
        return json.loads(f'"{value}"')
    if kind == "number" and not _JSON_NUMBER.fullmatch(value):
        raise ValueError(f"Unexpected number {value!r}")
    return json.loads(value)  # a JSON number, or true/false/null


def _parsed(tokens: list[tuple[str, str, bool]]) -> Any:
    """``JSON.parse`` of the tokens' text, by a loop: the value, or ``VendoredParseError`` where it throws."""
    stack: list[tuple[list[Any] | dict[str, Any], list[str]]] = []  # each open container, and its key to fill
    done: list[Any] = []  # the whole value, once read
    expect = "value"  # what may come next: value, value-or-close, key, key-or-close, colon, comma-or-close, end
    try:
        for kind, value, _ in tokens:
            if expect in ("value", "value-or-close") and value in ("[", "{"):
                stack.append(([], []) if value == "[" else ({}, []))
                expect = "value-or-close" if value == "[" else "key-or-close"
                continue
            if expect in ("key", "key-or-close") and kind == "string":
                stack[-1][1].append(_scalar(kind, value))
                expect = "colon"
                continue
            if expect == "colon" and kind == "separator":
                expect = "value"
                continue
            if expect == "comma-or-close" and kind == "delimiter":
                expect = "value" if isinstance(stack[-1][0], list) else "key"
                continue
            closes = value == "]" and expect in ("value-or-close", "comma-or-close")
            closes = closes or (value == "}" and expect in ("key-or-close", "comma-or-close"))
            if closes and isinstance(stack[-1][0], list) == (value == "]"):
                item: Any = stack.pop()[0]
            elif expect in ("value", "value-or-close") and kind in ("string", "number", "name"):
                item = _scalar(kind, value)
            else:
                raise ValueError(f"Unexpected token {value!r}")
            if not stack:
                done.append(item)
                expect = "end"
                continue
            container, key = stack[-1]
            if isinstance(container, list):
                container.append(item)
            else:
                container[key.pop()] = item
            expect = "comma-or-close"
    except ValueError as error:
        raise VendoredParseError(str(error)) from None
    if expect != "end":
        raise VendoredParseError("Unexpected end of JSON input")
    return done[0]
