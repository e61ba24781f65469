"""A session's request bodies kept once: what a request repeats of the one before shares its objects.

Every request of an agent session carries the whole history before it, so its bytes, and the
objects it parses to, grow with the square of the turns: a 1,000-turn session parsed whole holds
the first message a thousand times. ``Repeats.share`` makes each request's history point at the
previous request's objects where it repeats them: in each list at the top of the body
(``messages``, ``contents``, ``input``, ``tools`` …) the leading items equal to the previous
body's items at the same places become those items (and a list equal to the previous one, as
``tools`` usually is, becomes it), and any other top-level value equal to the previous one
(``system``, ``toolConfig``) becomes it. The objects it leaves then go as soon as
the body is parsed, so a session's parsed requests take about what its last one takes.

Equal is the same JSON value (``jsontext.equal``: ``1`` is ``1.0``, ``true`` is not ``1``, at any
depth), as ``conversation.requests.History`` compares a history with the one before: an item edited
from ``true`` to ``1`` keeps its own object, so the body still reads ``1``. Nothing writes into a body
once it is read (writers copy it: ``exchange.redact_body``), so a shared object is only ever read.

Comparing the items one by one costs about as much as parsing them, on every request (more, to tell
``true`` from ``1``). Where the bodies are values orjson parsed from JSON text (``Repeats(json_text=True)``:
the envelope's lines), each list is also written once with ``orjson.dumps`` and compared as bytes: a
list whose text starts with the previous list's items' text, followed by the comma or bracket that
ends an item, holds those items (JSON's grammar ends each item there, and orjson writes every such
value one way only: no NaN, no infinity, no date in what it parsed). Other bodies (a cassette's YAML, a
HAR file's) are compared as values: their text is not kept, which would hold a copy of the history
beside it (three HAR request bodies of 48 MiB then no longer fit the address space that a 128 MiB
budget leaves, tests/test_adversarial.py). Any other case, a history that was edited among them, is
compared item by item: the bytes only ever say "the same" where the items are.

Writing each list again still cost a tenth of a session's replay, and parsing the history again most of
the rest. The envelope's reader asks ``record_of(line)`` before it parses a line: once a line is proved to
hold its body as orjson writes it, last in the record (``share(body, line)``), the offset of the closing
bracket of the list that grew (the history) is known (``Anchor``). The next line then holds the previous
body's text up to that bracket, a comma and the new items (what ``[…]`` parses as a list), and the
previous body's text after the bracket, as bytes compared in C; and the text before its ``"body":`` is an
object that ``0}`` and ``1}`` close with that number as its ``body``. A parser reads the same bytes in the
same way, so the line parses to the previous body with items added to that list, whatever its escapes,
duplicate keys or spaces: its record is made of the text before the body, the previous body's objects and
the new items, the only part of the body parsed. Any other line, an edited history among them, is parsed
and compared as above.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import orjson

from stream_doctor.util.jsontext import equal


class Anchor(NamedTuple):
    """Where a request's line holds the list that grew, proved (see the module): the offset of the
    body's text in the line (which ends with it and the record's ``}``), and of the list's ``]``."""

    line: bytes
    key: str  # the body's list that grew (``messages``, ``input`` …)
    body: int  # offset of the body's text: its first byte
    end: int  # offset of the list's closing bracket
    size: int  # the list's items
    head: dict[str, Any]  # the record the text before the body reads as (``_head``), but for its body


_BODY = b'"body":'
#: ``Repeats.shortest`` with no anchor: no line is tried
_NEVER = 1 << 62


class Repeats:
    """The previous request body of one capture, whose objects the next one shares."""

    def __init__(self, json_text: bool = False) -> None:
        self.previous: dict[str, Any] | None = None
        self.json_text = json_text
        #: the previous body's lists as orjson writes them, by key (None: it cannot)
        self.texts: dict[str, bytes | None] = {}
        #: where the previous line holds the list that grew, when proved (see ``Anchor``)
        self.anchor: Anchor | None = None
        #: False once a line was not its body as orjson writes it: a writer of another kind, not tried again
        self.anchoring = True
        #: A line this long or shorter is not tried by ``record_of`` (an event's line, shorter than the text
        #: it should repeat): its reader need not ask for each of them
        self.shortest = _NEVER

    def record_of(self, line: bytes) -> dict[str, Any] | None:
        """The record a line holds when it is proved to be the previous request's body with items added to
        the anchor's list (see ``Anchor``), made of the previous body's objects and the new items, the only
        part parsed; None: the line is parsed and its body shared (``share``) as any other."""
        anchor, previous = self.anchor, self.previous
        if anchor is None or previous is None or len(line) <= self.shortest:
            return None
        proved = _proved(anchor, line)
        if proved is None:
            return None
        head, start, cut, new = proved
        body = dict(previous)
        if new:
            body[anchor.key] = previous[anchor.key] + new
        record = dict(head)  # each record its own: a reader writes into it (a redacted URL)
        record["body"] = self.previous = body
        self._anchor(Anchor(line, anchor.key, start, cut, anchor.size + len(new), head))
        self.texts = {}  # an edit next is compared item by item (``_share_prefix``)
        return record

    def share(self, body: Any, line: bytes | None = None) -> None:
        """Put the previous body's objects in ``body`` where it repeats them (in place); ``line``: the
        bytes ``body``'s record was parsed from, anchored for the next line where it can be."""
        if type(body) is not dict:
            return
        previous, self.previous = self.previous, body
        self._anchor(None)
        grew = self._share_each(body, previous)
        if grew is not None and line is not None and self.anchoring:
            self._anchor(self._anchored(line, body, grew))

    def _anchor(self, anchor: Anchor | None) -> None:
        self.anchor = anchor
        self.shortest = _NEVER if anchor is None else anchor.end - anchor.body

    def _share_each(self, body: dict[str, Any], previous: dict[str, Any] | None) -> str | None:
        """Each value of ``body`` compared with ``previous``'s (as bytes where written, else as values);
        the key of the list that grew (its leading items the previous list's), if any."""
        texts_before, self.texts = self.texts, {}
        grew = None
        for key, value in body.items():
            text = None
            if self.json_text and type(value) is list:
                text = self.texts[key] = list_text(value)
            before = None if previous is None else previous.get(key)
            if before is None or before is value or type(before) is not type(value):
                continue
            if type(value) is list:
                if text_repeats(texts_before.get(key), text):
                    value[: len(before)] = before  # the same items, as their bytes prove
                    shared = len(before)
                else:
                    shared = _share_prefix(before, value)
                if shared == len(value) == len(before):
                    body[key] = before  # the same list again (``tools``): the list too
                elif shared == len(before) > 0:
                    grew = key
            elif equal(value, before):
                body[key] = before  # a value of a key already there: the dict's size does not change
        return grew

    def _anchored(self, line: bytes, body: dict[str, Any], key: str) -> Anchor | None:
        """The anchor of a line that holds its body as orjson writes it, last in its record, or None. The
        list's text is the one just written (``texts``); the rest of the body is written around it."""
        found, text = _head(line), self.texts.get(key)
        if found is None or text is None:
            return None
        head, start = found
        keys = list(body)
        at = keys.index(key)
        try:  # the body before the list (closed with ``[]}``) and after it (``{…}``): orjson's
            before = orjson.dumps({name: body[name] if name != key else [] for name in keys[: at + 1]})
            after = orjson.dumps({name: body[name] for name in keys[at + 1 :]})
        except orjson.JSONEncodeError:
            return None
        end = start + len(before) - 3 + len(text) - 1  # the list's ``]``
        rest = (b"," + after[1:-1] if len(after) > 2 else b"") + b"}}"  # the body's other keys, its ``}``, the record's
        if not (line.startswith(memoryview(before)[:-3], start) and line.startswith(text, end + 1 - len(text))):
            self.anchoring = False  # another writer (spaces, escapes, key order): its lines never will be
            return None
        if len(line) != end + 1 + len(rest) or not line.endswith(rest):
            self.anchoring = False
            return None
        return Anchor(line, key, start, end, len(body[key]), head)


def _head(line: bytes) -> tuple[dict[str, Any], int] | None:
    """The record a request line holds, but for its body, and where the body's text begins, in a line
    that ends with that text and ``}``; or None. The text before it must read, closed with ``0}`` or with
    ``1}``, as an object whose ``body`` is that number: the value there is the body's (a ``body`` of the
    text before would be the same number both times)."""
    found = line.find(_BODY)
    if found < 0 or line[-1:] != b"}":
        return None
    start = found + len(_BODY)
    try:
        head, again = orjson.loads(line[:start] + b"0}"), orjson.loads(line[:start] + b"1}")
    except orjson.JSONDecodeError:
        return None
    if type(head) is not dict or type(again) is not dict:
        return None
    if type(head.get("body")) is not int or head["body"] != 0 or type(again["body"]) is not int or again["body"] != 1:
        return None
    return head, start


def _proved(anchor: Anchor, line: bytes) -> tuple[dict[str, Any], int, int, list[Any]] | None:
    """The record of a line that holds the previous body's text with items added to the anchor's list
    (its body not set, shared with the anchor's when the text before the body is the previous line's),
    where the body's text begins and the list's bracket is, and the new items; or None."""
    old = anchor.line
    if line.startswith(memoryview(old)[: anchor.body]):  # the same text before the body: the same record
        record, start = anchor.head, anchor.body
    else:
        found = _head(line)
        if found is None:
            return None
        record, start = found
    end = start + (anchor.end - anchor.body)  # where the previous text up to the bracket ends here
    cut = len(line) - (len(old) - anchor.end)  # where the previous text from the bracket begins here
    previous_text = memoryview(old)
    # (``startswith`` and ``endswith`` compare with one memcmp; a memoryview's ``==`` goes byte by byte)
    if cut < end or not line.startswith(previous_text[anchor.body : anchor.end], start):
        return None
    if not line.endswith(previous_text[anchor.end :]):
        return None
    if cut == end:
        return record, start, cut, []
    if line[end] != 0x2C:  # a comma, then the new items, which brackets around them must read as items
        return None
    try:
        new = orjson.loads(b"[" + line[end + 1 : cut] + b"]")
    except orjson.JSONDecodeError:
        return None
    if not new:  # a comma then nothing (``[1,2,]``, ``[1,2, ]``): no item follows it, and the line is not JSON
        return None
    return record, start, cut, new


def list_text(value: list[Any]) -> bytes | None:
    """The list as orjson writes it, or None where it cannot (an integer past 64 bits) or would write
    another value the same (a date, written as the string it would be)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_PASSTHROUGH_DATETIME)
    except orjson.JSONEncodeError:
        return None


def text_repeats(before: bytes | None, text: bytes | None) -> bool:
    """Whether the list written ``text`` starts with every item of the list written ``before``."""
    if before is None or text is None or len(before) <= 2:  # none written, or ``[]``: nothing to share
        return False
    end = len(before) - 1  # where ``before``'s closing bracket is, and ``text`` must end an item
    return text[end : end + 1] in (b",", b"]") and text.startswith(memoryview(before)[:end])


def repeats_items(items: list[Any], before: list[Any]) -> bool:
    """Whether ``items`` starts with every item of ``before``, the same JSON values (``jsontext.equal``).

    As cheap as one ``==`` in C where this module shared them. Every body is parsed from bytes, and only
    ``Repeats`` makes two bodies hold the same object: a leading run of a list, each item at its own
    place. So where the last item of ``before`` is the very object at its place in ``items``, so is each
    item before it (the same values: no ``1`` for ``true`` hides there), and ``==`` confirms it, each
    item found the same object at once. Any other pair of lists is compared by ``equal``.
    """
    size = len(before)
    if len(items) < size:
        return False
    if size and items[size - 1] is before[-1] and items[:size] == before:
        return True
    return equal(items[:size], before)


def _share_prefix(before: list[Any], items: list[Any]) -> int:
    """``items``' leading run of items equal to ``before``'s, replaced by ``before``'s; its length."""
    size = len(before)
    if len(items) >= size and equal(items[:size], before):  # the common case: ``==`` and orjson's bytes, in C
        items[:size] = before
        return size
    same = 0
    for old, new in zip(before, items, strict=False):  # an edited history: up to the first change
        if old is not new and not equal(old, new):
            break
        same += 1
    items[:same] = before[:same]
    return same
