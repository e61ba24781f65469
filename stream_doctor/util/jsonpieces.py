"""JSON written as it is built: the bytes ``orjson.dumps`` gives for a document, in pieces.

A report of 100,000 calls is hundreds of megabytes of JSON; built as one dict and then one string
it costs several times that in memory. Here a document is a dict whose large lists are iterators
(generators): each element is serialised when its turn comes and handed on, so at most one
element's bytes are held at a time, and the element (a call's dict, with its arguments) is built
only then. A ``bytes`` value is JSON serialised already (a replay's report inside check's) and is
passed on as it is, as ``orjson.Fragment`` would be. The bytes are exactly ``orjson.dumps`` of the
same document with its iterators as lists, indented (``OPT_INDENT_2``) or compact
(``tests/test_pieces.py``).

Neutral ground: the reporters write their machine formats with it, and ``check`` serialises each
replay's report with it; every JSON output makes the pieces safe to print with ``jsontext.printable_pieces``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from stream_doctor.util import jsontext


def pieces(document: Mapping[str, Any], indent: bool = True) -> Iterator[bytes]:
    """``orjson.dumps(document)`` (its iterators as lists) in pieces, with no line end after it."""
    return _object(document, indent, 0)


def materialised(document: Mapping[str, Any]) -> dict[str, Any]:
    """The document as plain data: its iterators as lists (one level: nested documents are not streamed)."""
    return {key: list(value) if isinstance(value, Iterator) else value for key, value in document.items()}


def _streams(value: Any) -> bool:
    return isinstance(value, dict) and any(isinstance(v, (Iterator, bytes)) for v in value.values())


def _value(value: Any, indent: bool, level: int) -> Iterator[bytes]:
    if isinstance(value, Iterator):
        yield from _array(value, indent, level)
    elif isinstance(value, bytes):
        yield value
    elif _streams(value):
        yield from _object(value, indent, level)
    else:
        yield _dump(value, indent, level)


def _dump(value: Any, indent: bool, level: int) -> bytes:
    # The one place a report's values are serialised: what orjson cannot write (a lone surrogate, a
    # value nested deeper than it writes) is written escaped or cut, never an exception (jsontext.shown).
    if not indent:
        return jsontext.shown(value)
    serialised = jsontext.shown(value, orjson.OPT_INDENT_2)
    # A newline in indented JSON is always layout (inside a string it is the escape \n), so the
    # value's lines move right by its depth in the document.
    return serialised.replace(b"\n", b"\n" + b"  " * level) if level else serialised


def _object(document: Mapping[str, Any], indent: bool, level: int) -> Iterator[bytes]:
    if not document:
        yield b"{}"
        return
    inner = b"\n" + b"  " * (level + 1) if indent else b""
    between = b"," + inner
    separator = b": " if indent else b":"
    opened = False
    for key, value in document.items():
        yield (between if opened else b"{" + inner) + jsontext.shown(key) + separator
        opened = True
        yield from _value(value, indent, level + 1)
    yield (b"\n" + b"  " * level if indent else b"") + b"}"


def _array(items: Iterator[Any], indent: bool, level: int) -> Iterator[bytes]:
    inner = b"\n" + b"  " * (level + 1) if indent else b""
    between = b"," + inner
    opened = False
    for item in items:
        prefix = between if opened else b"[" + inner
        opened = True
        if isinstance(item, (Iterator, bytes)) or _streams(item):
            yield prefix
            yield from _value(item, indent, level + 1)
        else:  # the common case (a call, a finding): one piece each
            yield prefix + _dump(item, indent, level + 1)
    if not opened:
        yield b"[]"
    else:
        yield (b"\n" + b"  " * level if indent else b"") + b"]"
