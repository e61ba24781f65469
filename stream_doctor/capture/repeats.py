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

Equal is equal as parsed JSON values (``1 == 1.0``), as ``conversation.requests.History`` compares
a history with the one before, at any depth orjson reads (``jsontext.equal``: Python's ``==`` raises
``RecursionError`` near 1,000 levels). Nothing writes into a body once it is read (writers copy it:
``exchange.redact_body``), so a shared object is only ever read.

Comparing the items one by one costs about as much as parsing them, on every request. Where the
bodies are values orjson parsed from JSON text (``Repeats(json_text=True)``: the envelope's lines),
each list is also written once with ``orjson.dumps`` and compared as bytes: a list whose text starts
with the previous list's items' text, followed by the comma or bracket that ends an item, holds those
items (JSON's grammar ends each item there, and orjson writes every such value one way only: no NaN,
no infinity, no date in what it parsed). Any other case, a history that was edited among them, is
compared item by item as before: the bytes only ever say "the same" where the items are.

Writing each list again still costs a tenth of a session's replay, growing with its bytes. Where the
line a request was parsed from is given (``share(body, line)``, the envelope's reader), a request is
first compared with the previous one on the lines themselves (``Anchor``): once a line is proved to hold
its body as orjson writes it, last in the record, the offset of the closing bracket of the list that
grew (the history) is known. The next line then holds the previous body's text up to that bracket, the
new items (a comma, then what ``[…]`` parses as a list), and the previous body's text after the bracket,
as bytes compared in C; and the text before its ``"body":`` is an object that ``0}`` closes with
``"body": 0``. A parser reads the same bytes in the same way, so the body parses to the previous body
with items added to that list: every other value, and the list's leading items, are the previous ones,
whatever their escapes, duplicate keys or spaces; only the new items are read again (to prove where they
end). Any other line, an edited history among them, is compared as above.
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


_BODY = b'"body":'


class Repeats:
    """The previous request body of one capture, whose objects the next one shares."""

    def __init__(self, json_text: bool = False) -> None:
        self.previous: dict[str, Any] | None = None
        self.json_text = json_text
        #: the previous body's lists as orjson writes them, by key (when ``json_text``; None: it cannot)
        self.texts: dict[str, bytes | None] = {}
        #: where the previous line holds the list that grew, when proved (see ``Anchor``)
        self.anchor: Anchor | None = None
        #: False once a line was not its body as orjson writes it: a writer of another kind, not tried again
        self.anchoring = True

    def share(self, body: Any, line: bytes | None = None) -> None:
        """Put the previous body's objects in ``body`` where it repeats them (in place); ``line``: the
        bytes ``body``'s record was parsed from, compared with the previous line's where it can be."""
        if type(body) is not dict:
            return
        previous, self.previous = self.previous, body
        anchor, self.anchor = self.anchor, None
        if anchor is not None and line is not None and previous is not None:
            self.anchor = _extended(anchor, line, body, previous)
            if self.anchor is not None:
                self.texts = {}  # an edit next is compared item by item (``_share_prefix``)
                return
        grew = self._share_each(body, previous)
        if grew is not None and line is not None and self.anchoring:
            self.anchor = self._anchored(line, body, grew)

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
        """The anchor of a line that holds its body as orjson writes it, last in its record, or None."""
        start = _body_start(line)
        if start is None:
            return None
        try:
            text = orjson.dumps(body)
            after = orjson.dumps(dict(list(body.items())[list(body).index(key) + 1 :]))
        except orjson.JSONEncodeError:
            return None
        if len(line) - 1 - start != len(text) or not line.startswith(text, start):
            self.anchoring = False  # another writer (spaces, escapes, key order): its lines never will be
            return None
        # the body's text ends with the list's ``]``, the keys after it (``after``'s items) and ``}``
        end = start + len(text) - 2 - (len(after) - 1 if len(after) > 2 else 0)
        if line[end] != 0x5D:
            return None
        return Anchor(line, key, start, end, len(body[key]))


def _body_start(line: bytes) -> int | None:
    """Where the body's text begins in a request record's line that ends with it and ``}``, or None:
    the text before it, with ``0}``, must read as an object whose ``body`` is 0. The line parsed, with a
    dict as its body, so that 0 is not an earlier ``body``'s; and what follows it is the body's text."""
    found = line.find(_BODY)
    if found < 0 or line[-1:] != b"}":
        return None
    start = found + len(_BODY)
    try:
        head = orjson.loads(line[:start] + b"0}")
    except orjson.JSONDecodeError:
        return None
    return start if type(head) is dict and type(head.get("body")) is int and head["body"] == 0 else None


def _extended(anchor: Anchor, line: bytes, body: dict[str, Any], previous: dict[str, Any]) -> Anchor | None:
    """The next line's anchor when its body is the previous body with items added to the anchor's list
    (its objects then shared in ``body``), else None (see the module)."""
    old = anchor.line
    start = _body_start(line)
    if start is None:
        return None
    end = start + (anchor.end - anchor.body)  # where the previous text up to the bracket ends here
    cut = len(line) - (len(old) - anchor.end)  # where the previous text from the bracket begins here
    previous_text = memoryview(old)
    # (``startswith`` and ``endswith`` compare with one memcmp; a memoryview's ``==`` goes byte by byte)
    if cut < end or not line.startswith(previous_text[anchor.body : anchor.end], start):
        return None
    if not line.endswith(previous_text[anchor.end :]):
        return None
    added = 0
    if cut > end:  # a comma, then the new items, which the list's brackets around them must read as items
        if line[end] != 0x2C:
            return None
        try:
            new = orjson.loads(b"[" + line[end + 1 : cut] + b"]")
        except orjson.JSONDecodeError:
            return None
        added = len(new)
    items = body.get(anchor.key)
    if type(items) is not list or len(items) != anchor.size + added or len(body) != len(previous):
        return None  # cannot be, by the proof: compared as values instead
    for key, value in previous.items():
        if key != anchor.key:
            body[key] = value
    items[: anchor.size] = previous[anchor.key]
    if not added:
        body[anchor.key] = previous[anchor.key]
    return Anchor(line, anchor.key, start, cut, anchor.size + added)


def list_text(value: list[Any]) -> bytes | None:
    """The list as orjson writes it, or None where it cannot (an integer past 64 bits)."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return None


def text_repeats(before: bytes | None, text: bytes | None) -> bool:
    """Whether the list written ``text`` starts with every item of the list written ``before``."""
    if before is None or text is None or len(before) <= 2:  # none written, or ``[]``: nothing to share
        return False
    end = len(before) - 1  # where ``before``'s closing bracket is, and ``text`` must end an item
    return text[end : end + 1] in (b",", b"]") and text.startswith(memoryview(before)[:end])


def _share_prefix(before: list[Any], items: list[Any]) -> int:
    """``items``' leading run of items equal to ``before``'s, replaced by ``before``'s; its length."""
    size = len(before)
    if len(items) >= size and equal(items[:size], before):  # the common case, one comparison in C
        items[:size] = before
        return size
    same = 0
    for old, new in zip(before, items, strict=False):  # an edited history: up to the first change
        if old is not new and not equal(old, new):
            break
        same += 1
    items[:same] = before[:same]
    return same
