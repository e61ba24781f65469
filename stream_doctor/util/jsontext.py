"""JSON text for any value a capture can hold, also the ones ``orjson.dumps`` refuses.

orjson reads 1,024 levels of nesting but writes only 254, and writes no string that holds a lone
surrogate (what ``os.fsdecode`` makes of a file name that is not UTF-8, and ``json.loads`` of
``"\\ud800"``, as a client profile's parser may). Both reach the output from a capture: arguments
nested 300 deep, a file name in Latin-1. Two answers, each the bytes ``orjson.dumps`` gives
whenever it can:

- ``dumps``: the whole value, where orjson refuses written by a loop that nests as deep as the value
  does (an adapter's argument text, the envelope ``convert`` writes: text that is read back);
- ``shown``: what a report writes: a container nested deeper than orjson writes is cut, a marker
  in its place, so that every JSON reader reads the report back.

Either way an integer beyond 64 bits is written as the number it is, and a lone surrogate as the
visible escape the text reports show (``escaped``):
``\\xe9`` for a byte a file name could not decode (U+DCE9, PEP 383), ``\\ud800`` for any other.

What JSON may hold raw but a terminal acts on (DEL, C1, the line and paragraph separators, the
bidirectional overrides and isolates: ``TERMINAL_ACTIVE``) is escaped in every JSON output by
``printable``/``printable_pieces``, so ``cat report.json`` is safe and the parsed data the same.
"""

from __future__ import annotations

import re
from functools import cache
from itertools import compress
from operator import is_, is_not
from typing import Any, Callable, Iterable, Iterator

import orjson

#: The nesting ``orjson.dumps`` writes (it reads 1,024 levels).
WRITABLE_DEPTH = 254
#: What a report shows in place of a container nested deeper than ``WRITABLE_DEPTH``.
CUT = f"… (nested deeper than {WRITABLE_DEPTH} levels: cut)"


@cache
def _surrogate() -> re.Pattern[str]:
    """Compiled on first use: only a text holding a lone surrogate, or a report that escapes one, asks."""
    return re.compile("[\ud800-\udfff]")


#: What a terminal acts on that JSON text may hold raw: DEL, C1 (NEL is U+0085), the Unicode line and
#: paragraph separators, and the bidirectional overrides and isolates that can make a terminal show
#: text in another order (the text reports escape these too, with C0: ``reporters/_neutral.py``).
TERMINAL_ACTIVE = (0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
# ``TERMINAL_ACTIVE`` as UTF-8: DEL, C1 (U+0080-U+009F), U+2028-U+202E, U+2066-U+2069.
_ACTIVE_BYTES = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]")


@cache
def _json_escapes() -> dict[int, str]:
    return {c: f"\\u{c:04x}" for c in TERMINAL_ACTIVE}


def printable(serialised: str) -> str:
    """A serialised JSON document with ``TERMINAL_ACTIVE`` escaped (the parsed value is the same)."""
    return serialised if serialised.isascii() else serialised.translate(_json_escapes())


def printable_pieces(serialised: Iterable[bytes]) -> Iterator[bytes]:
    """Each piece safe to print (``printable``). A piece with none of ``TERMINAL_ACTIVE`` (nearly all,
    also with other non-ASCII text) is passed on undecoded."""
    for piece in serialised:
        yield piece if piece.isascii() or _ACTIVE_BYTES.search(piece) is None else printable(piece.decode()).encode()


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def escaped(text: str) -> str:
    """``text`` with each lone surrogate shown as an escape: ``\\xNN`` for a byte that did not decode, else ``\\uXXXX``."""
    return _surrogate().sub(_visible, text)


def dumps(value: Any, option: int = 0, default: Callable[[Any], Any] | None = None) -> bytes:
    """``orjson.dumps(value, option=…)``; where orjson refuses (too deep, a lone surrogate), the same
    bytes written by a loop, at any depth, each lone surrogate escaped (``escaped``).

    ``option`` may hold ``OPT_INDENT_2``, ``OPT_SORT_KEYS``, ``OPT_APPEND_NEWLINE`` and ``OPT_NON_STR_KEYS``.
    """
    try:
        return orjson.dumps(value, default=default, option=option)
    except orjson.JSONEncodeError:
        return _written(value, option, default)


def shown(value: Any, option: int = 0, default: Callable[[Any], Any] | None = None) -> bytes:
    """``orjson.dumps(value, option=…)``; where orjson refuses, that of ``writable(value)``: deeper
    containers cut (``CUT``), lone surrogates escaped. What every JSON report writes."""
    try:
        return orjson.dumps(value, default=default, option=option)
    except orjson.JSONEncodeError:
        return orjson.dumps(writable(value), default=default, option=option)


def brief(value: Any, limit: int = 80) -> str:
    """A capture's value quoted in a message: its JSON text (``shown``: never Python's ``repr``, which
    recurses as deep as the value does), clipped at ``limit`` characters with "…"."""
    try:
        text = shown(value).decode()
    except TypeError:  # not JSON data (an object of ours): what str() says of it
        text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: How deep orjson reads: a value nested deeper is not parsed (not checked), whatever else it is.
READ_DEPTH = 1024
#: What orjson says when it gives up on nesting rather than on the text: past ``READ_DEPTH``, or (its
#: buffer sized by the text's length) a run of some hundred containers that never close.
GAVE_UP = ("depth limit exceeded", "failed to allocate memory")
#: The words for a value nested past ``READ_DEPTH`` ("it …", "the frame …").
TOO_DEEP = f"nests deeper than {READ_DEPTH:,} levels, which the JSON reader follows"
_ESCAPE = re.compile(r"\\.", re.DOTALL)
_STRING = re.compile(r'"[^"]*"')  # a string once its escapes are gone


def open_containers(text: str) -> int | None:
    """How many objects and arrays ``text`` leaves open at its end, its strings aside (None: it ends
    inside a string). One pass, for a text orjson gave up on (``GAVE_UP``) before its end."""
    outside = _STRING.sub("", _ESCAPE.sub("", text))
    if '"' in outside:
        return None
    return outside.count("[") + outside.count("{") - outside.count("]") - outside.count("}")


def equal(a: Any, b: Any) -> bool:
    """Whether two parsed JSON values are the same JSON value: the one definition every verdict uses.

    Exact where Python's ``==`` is not: ``true`` is not ``1`` and ``false`` is not ``0`` (``True == 1``
    in Python, but every JSON reader tells a boolean from a number, and a tool run with ``1`` for
    ``true`` ran with another input). Numbers compare by value: ``1`` is ``1.0``. JSON has one number
    type (RFC 8259 section 6); the JavaScript SDKs' ``JSON.parse`` reads both as the number 1, and an
    application that logs what it ran through ``JSON.stringify`` writes ``1`` for a streamed ``1.0``,
    so no capture proves that a run with ``1`` changed a ``1.0`` (Python's ``json``/orjson read ``1.0``
    as a float, equal to ``1`` by ``==`` too). Key order does not count; strings compare by their code
    points. A list is never a tuple (parsed JSON holds lists).

    Any depth (Python's comparison raises ``RecursionError`` near 1,000 levels; a capture's values nest
    up to 1,024, orjson's limit). As fast as ``==`` where it is hot: a session's history that repeats
    the previous request's holds the same objects (checked item by item, in C); values parsed apart are
    compared by ``==`` (every difference it sees is one JSON sees), then a long list (a history) item by
    item, a value holding a long string (a file's content in a tool's arguments) by a walk of its parts,
    and any other by orjson's bytes (``true`` and ``1`` are written apart); only where those disagree
    (another key order, ``1`` against ``1.0``, a value orjson does not write) a loop walks the pairs
    that are not the same objects.
    """
    if a is b or type(a) is list and type(b) is list and len(a) == len(b) and all(map(is_, a, b)):
        return True  # the same objects: a history that repeats the previous request's, item by item
    try:
        if a != b:
            return False  # every difference Python's comparison sees is one JSON sees
    except RecursionError:
        return _same(a, b) is True  # nested deeper than Python's comparison recurses
    return _exact(a, b)


def _exact(a: Any, b: Any) -> bool:
    """``equal`` for two values Python's ``==`` holds equal: they differ as JSON only where one holds a
    boolean and the other a number. A long list (a session's history) is compared item by item, so that
    orjson never writes a whole history out; see ``_exact_part``."""
    if type(a) is list and type(b) is list and len(a) > _WALKED:
        return all(map(_exact_part, a, b))  # (``==`` held: the same length)
    return _exact_part(a, b)


def _exact_part(a: Any, b: Any) -> bool:
    """``_exact`` of one value. orjson writes ``true`` and ``1`` apart, so the same bytes prove the same
    value (in C), but a value holding a long string (a file's content in a tool's arguments, a message's
    text) is walked instead: writing it out costs ten times the ``==`` (a megabyte: 1.5 ms against
    0.15), and orjson reserves about ten bytes of address space for each character of the string before
    it writes it (a 48 MiB string: 500 MiB; past a process's limit on address space orjson does not
    raise MemoryError, it crashes). A small value is written out faster than walked."""
    if a is b:
        return True
    if type(a) not in _CONTAINERS:
        return (type(a) is bool) is (type(b) is bool)  # ``true == 1`` in Python; a string equals a string
    if _long_string(a):
        walked = _same(a, b, _WALKED)
        if walked is not None:
            return walked
    try:
        if orjson.dumps(a) == orjson.dumps(b):
            return True
    except TypeError:  # not written (nested past 254 levels, a lone surrogate, an integer past 64 bits)
        pass
    return _same(a, b) is True  # other key orders, ``1`` against ``1.0``, or a boolean against a number


_CONTAINERS = (dict, list, tuple)
#: The members (of objects and arrays, in all) of a value ``equal`` walks; a larger one it compares as
#: orjson's bytes instead, and a longer list item by item.
_WALKED = 64
#: A string this long makes a value of few members cheaper walked than written out.
_LONG = 4096


def _long_string(value: Any) -> bool:
    """Whether ``value`` holds a string of ``_LONG`` characters or more among its first ``_WALKED``
    members, at any depth (a loop: no recursion)."""
    pending = [value]
    parts = _WALKED
    while pending:
        container = pending.pop()
        members = container.values() if type(container) is dict else container
        parts -= len(members)
        if parts < 0:
            return False
        for member in members:
            kind = type(member)
            if kind is str:
                if len(member) >= _LONG:
                    return True
            elif kind in _CONTAINERS:
                pending.append(member)
    return False


def _same(a: Any, b: Any, parts: int | None = None) -> bool | None:
    """``equal``, as a loop over the pairs still to compare (any depth), skipping the shared objects;
    None, with nothing walked past it, when the values hold more than ``parts`` members in all."""
    pairs = [(a, b)]
    while pairs:
        x, y = pairs.pop()
        if parts is not None and isinstance(x, _CONTAINERS):
            parts -= len(x)
            if parts < 0:
                return None
        if isinstance(x, dict):
            if not isinstance(y, dict) or x.keys() != y.keys():
                return False
            theirs = list(map(y.__getitem__, x))
            pairs.extend(compress(zip(x.values(), theirs, strict=True), map(is_not, x.values(), theirs)))
        elif isinstance(x, (list, tuple)):
            if type(x) is not type(y) or len(x) != len(y):
                return False
            pairs.extend(compress(zip(x, y, strict=True), map(is_not, x, y)))
        elif isinstance(y, (dict, list, tuple)) or type(x) is bool or type(y) is bool or x != y:
            return False  # (x is not y: two booleans here are ``true`` and ``false``)
    return True


def writable(value: Any, depth: int = 0) -> Any:
    """A copy of ``value`` that ``orjson.dumps`` writes: lone surrogates escaped, and each container
    ``WRITABLE_DEPTH`` levels down replaced by ``CUT`` (so the recursion stays that shallow too)."""
    if isinstance(value, str):
        return escaped(value)
    if isinstance(value, dict):
        if depth >= WRITABLE_DEPTH:
            return CUT
        return {(escaped(k) if isinstance(k, str) else k): writable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if depth >= WRITABLE_DEPTH:
            return CUT
        return [writable(v, depth + 1) for v in value]
    if type(value) is int and not _INT64_MIN <= value <= _UINT64_MAX:
        return orjson.Fragment(str(value).encode())  # a JSON number orjson will not write itself
    return value


#: The integers ``orjson.dumps`` writes (a capture's JSON, read by ``json.loads``, may hold larger).
_INT64_MIN = -(2**63)
_UINT64_MAX = 2**64 - 1


def _leaf(value: Any, option: int, default: Callable[[Any], Any] | None) -> bytes:
    return orjson.dumps(writable(value), default=default, option=option & ~orjson.OPT_APPEND_NEWLINE)


def _written(value: Any, option: int, default: Callable[[Any], Any] | None) -> bytes:
    """The bytes ``orjson.dumps`` writes for ``value``, without its depth limit: a loop over an explicit
    stack (Python's own recursion limit is 1,000), each scalar, key and shallow container by orjson."""
    indent = bool(option & orjson.OPT_INDENT_2)
    sort = bool(option & orjson.OPT_SORT_KEYS)
    out: list[bytes] = []
    # Each entry: the items still to write of an open container, its closing byte, its depth.
    stack: list[tuple[Any, bytes, int]] = []

    def open_container(item: Any, depth: int) -> None:
        if isinstance(item, dict):
            items = sorted(item.items()) if sort else list(item.items())
            if not items:
                out.append(b"{}")
                return
            out.append(b"{")
            stack.append((iter(items), b"}", depth))
        else:
            if not item:
                out.append(b"[]")
                return
            out.append(b"[")
            stack.append((iter(((None, v) for v in item)), b"]", depth))

    def write(item: Any, depth: int) -> None:
        if isinstance(item, (dict, list, tuple)):
            open_container(item, depth)
        else:
            out.append(_leaf(item, option, default))

    write(value, 0)
    first = True
    while stack:
        items, closing, depth = stack[-1]
        entry = next(items, None)
        if entry is None:
            stack.pop()
            if indent:
                out.append(b"\n" + b"  " * depth)
            out.append(closing)
            first = False
            continue
        key, item = entry
        if not first:
            out.append(b",")
        if indent:
            out.append(b"\n" + b"  " * (depth + 1))
        if closing == b"}":
            name = key if isinstance(key, str) else _key(key, option)
            out.append(orjson.dumps(escaped(name)) + (b": " if indent else b":"))
        first = isinstance(item, (dict, list, tuple)) and bool(item)
        write(item, depth + 1)
    if option & orjson.OPT_APPEND_NEWLINE:
        out.append(b"\n")
    return b"".join(out)


def _key(key: Any, option: int) -> str:
    """A key that is not a string, as ``OPT_NON_STR_KEYS`` writes it (orjson refuses it otherwise)."""
    if not option & orjson.OPT_NON_STR_KEYS:
        raise orjson.JSONEncodeError("Dict key must be str")
    text = orjson.dumps(key, option=orjson.OPT_NON_STR_KEYS)
    return orjson.loads(text) if text.startswith(b'"') else text.decode()
