"""What the SDKs' partial JSON parse of a growing argument buffer gives, kept up to date fragment by fragment.

The Anthropic Python SDK (``accumulate_event``) and openai-python (``ChatCompletionStreamState``)
report, after each fragment, ``jiter.from_json(buffer, partial_mode=True)`` of the whole buffer so
far (``input_json``'s ``snapshot``, ``parsed_arguments``). That parse keeps every complete value,
every container opened (even empty), and a trailing number that is valid so far (``1``, ``1.5``;
not ``1.``, ``1e``, ``-``); it drops an unfinished string (and its key), an unfinished literal and
a key still waiting for its value.

``PartialJson`` reads each fragment once (a small state machine; string bodies are skipped with
one regular-expression search each), building the same value. ``matches(snapshot)`` compares a
helper's snapshot with it without re-reading what was compared before: along the path to the
value still open it checks each container's type and size, compares the children completed
since the previous snapshot (each completed child is compared once in the call's life) and the
trailing number. So the cost over a whole log is linear in the argument text plus the depth per
snapshot. What an earlier snapshot was checked for is not checked again: a later snapshot that
changes an older, completed value without changing any size is not seen (the completed call's
snapshot is compared whole, once, by the accumulator).

Where jiter's answer is not certain (``NaN``/``Infinity``, an integer beyond 64 bits, duplicate
keys, text after the top-level value, invalid JSON, a top-level unfinished string or literal),
``matches`` returns None: no verdict rather than a guessed one.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import orjson

from stream_doctor.util.jsontext import equal

_STRING_STOP = re.compile(r'["\\]')
_NUMBER_CHARS = frozenset("0123456789+-.eE")
_WHITESPACE = frozenset(" \t\r\n")
_LITERALS = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}

# What the machine waits for.
_VALUE = 0  # a value (after ``:``, ``,`` in an array, or at the start)
_VALUE_OR_END = 1  # a value or ``]`` (just after ``[``)
_KEY = 2  # a key (after ``,`` in an object)
_KEY_OR_END = 3  # a key or ``}`` (just after ``{``)
_COLON = 4
_AFTER = 5  # ``,`` or the container's end, after a value
_STRING = 6
_NUMBER_TEXT = 7
_LITERAL = 8
_DONE = 9  # the top-level value is complete
_UNSURE = 10  # no verdict from here on


class _Frame:
    """An open container: the value built so far, its keys in order (objects) and how many of its
    children a snapshot was already compared for."""

    __slots__ = ("node", "keys", "key", "checked")

    def __init__(self, node: dict[str, Any] | list[Any]) -> None:
        self.node = node
        self.keys: list[str] = []  # objects: keys in order, the open child's included
        self.key: str | None = None  # objects: the key read, its value not yet begun
        self.checked = 0


class PartialJson:
    __slots__ = ("frames", "state", "text", "is_key", "escape")

    def __init__(self) -> None:
        # A list holding the top-level value, so the top level is compared like any array.
        self.frames: list[_Frame] = [_Frame([])]
        self.state = _VALUE
        self.text: list[str] = []  # the string, number or literal being read
        self.is_key = False
        self.escape = False  # the last fragment ended inside a string on a backslash

    def feed(self, fragment: str) -> None:
        i, n = 0, len(fragment)
        while i < n and self.state != _UNSURE:
            state = self.state
            if state == _STRING:
                if self.escape:
                    self.text.append(fragment[i])
                    self.escape = False
                    i += 1
                    continue
                stop = _STRING_STOP.search(fragment, i)
                if stop is None:
                    self.text.append(fragment[i:])
                    return
                j = stop.start()
                self.text.append(fragment[i:j])
                if fragment[j] == "\\":
                    self.text.append("\\")
                    self.escape = True
                    i = j + 1
                    continue
                i = j + 1
                self._string_end()
                continue
            char = fragment[i]
            if state == _NUMBER_TEXT:
                if char in _NUMBER_CHARS:
                    self.text.append(char)
                    i += 1
                    continue
                self._number_end()
                continue  # the character that ended it is read again
            if state == _LITERAL:
                self.text.append(char)
                i += 1
                word = "".join(self.text)
                literal, value = _LITERALS[word[0]]
                if not literal.startswith(word):
                    self.state = _UNSURE
                elif word == literal:
                    self._complete(value)
                continue
            i += 1
            if char in _WHITESPACE:
                continue
            self._token(char)

    def _token(self, char: str) -> None:
        state = self.state
        frame = self.frames[-1]
        if state in (_VALUE, _VALUE_OR_END):
            if char == "]" and state == _VALUE_OR_END:
                self._close(list)
            elif char == "{" or char == "[":
                self._open({} if char == "{" else [])
            elif char == '"':
                self.state, self.is_key, self.text = _STRING, False, []
            elif char == "-" or "0" <= char <= "9":
                self.state, self.text = _NUMBER_TEXT, [char]
            elif char in _LITERALS:
                self.state, self.text = _LITERAL, [char]
            else:
                self.state = _UNSURE  # NaN, Infinity, or not JSON
        elif state in (_KEY, _KEY_OR_END):
            if char == '"':
                self.state, self.is_key, self.text = _STRING, True, []
            elif char == "}" and state == _KEY_OR_END:
                self._close(dict)
            else:
                self.state = _UNSURE
        elif state == _COLON:
            self.state = _VALUE if char == ":" else _UNSURE
        elif state == _AFTER:
            if char == ",":
                self.state = _KEY if isinstance(frame.node, dict) else _VALUE
            elif char == "}" and isinstance(frame.node, dict) or char == "]" and isinstance(frame.node, list):
                self._close(type(frame.node))
            else:
                self.state = _UNSURE
        else:  # text after the top-level value: jiter's partial mode ignores it; no verdict
            self.state = _UNSURE

    def _string_end(self) -> None:
        try:
            value = orjson.loads('"' + "".join(self.text) + '"')
        except orjson.JSONDecodeError:
            self.state = _UNSURE
            return
        self.text = []
        if not self.is_key:
            self._complete(value)
            return
        frame = self.frames[-1]
        if value in frame.node:  # a duplicate key: which value wins is jiter's choice
            self.state = _UNSURE
            return
        frame.key = value
        self.state = _COLON

    def _number_end(self) -> None:
        value = _number("".join(self.text))
        self.text = []
        if value is None:
            self.state = _UNSURE
        else:
            self._complete(value)

    def _attach(self, value: Any) -> None:
        frame = self.frames[-1]
        node = frame.node
        if isinstance(node, list):
            node.append(value)
        else:
            key = frame.key
            assert key is not None
            node[key] = value
            frame.keys.append(key)
            frame.key = None

    def _complete(self, value: Any) -> None:
        self._attach(value)
        self.state = _AFTER if len(self.frames) > 1 else _DONE

    def _open(self, node: dict[str, Any] | list[Any]) -> None:
        self._attach(node)  # jiter's partial parse shows an opened container at once
        self.frames.append(_Frame(node))
        self.state = _KEY_OR_END if isinstance(node, dict) else _VALUE_OR_END

    def _close(self, kind: type) -> None:
        if not isinstance(self.frames[-1].node, kind):
            self.state = _UNSURE
            return
        self.frames.pop()
        self.state = _AFTER if len(self.frames) > 1 else _DONE

    def matches(self, snapshot: Any) -> bool | None:
        """Whether ``snapshot`` is the partial parse of the text fed so far (None: no verdict)."""
        state = self.state
        if state == _UNSURE or len(self.frames) == 1 and state in (_STRING, _LITERAL):
            return None
        trailing: Any = None  # the number still being read, when it is valid so far
        has_trailing = False
        if state == _NUMBER_TEXT:
            trailing = _number("".join(self.text))
            has_trailing = trailing is not None
        frames = self.frames
        if not frames[0].node and not has_trailing:
            return None  # nothing read yet but white space: the SDKs parse nothing (or fail)
        seen: Any = [snapshot]
        last = len(frames) - 1
        for depth, frame in enumerate(frames):
            node = frame.node
            if type(seen) is not type(node):  # (mypy narrows ``seen`` here: ``value`` keeps it Any)
                return False
            value: Any = seen
            extra = 1 if depth == last and has_trailing else 0
            if len(value) != len(node) + extra:
                return False
            complete = len(node) if depth == last else len(node) - 1
            if isinstance(node, list):
                for i in range(frame.checked, complete):
                    if not equal(value[i], node[i]):
                        return False
                if extra and not equal(value[-1], trailing):
                    return False
                frame.checked = max(frame.checked, complete)
                if depth < last:
                    seen = value[len(node) - 1]
            else:
                keys = frame.keys
                for key in keys[frame.checked : complete]:
                    if key not in value or not equal(value[key], node[key]):
                        return False
                if extra and (frame.key not in value or not equal(value[frame.key], trailing)):
                    return False
                frame.checked = max(frame.checked, complete)
                if depth < last:
                    if keys[-1] not in value:
                        return False
                    seen = value[keys[-1]]
        return True


@cache
def _number_pattern() -> re.Pattern[str]:
    """Compiled on first use: only arguments read as they stream (a helper's snapshot, a client
    profile) that hold a number ask."""
    return re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")


def _number(text: str) -> Any:
    """The number ``text`` is, or None when it is not (yet) a valid JSON number orjson can read."""
    if not _number_pattern().match(text):
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
