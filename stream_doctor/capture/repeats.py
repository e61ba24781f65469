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
"""

from __future__ import annotations

from typing import Any

import orjson

from stream_doctor.util.jsontext import equal


class Repeats:
    """The previous request body of one capture, whose objects the next one shares."""

    def __init__(self, json_text: bool = False) -> None:
        self.previous: dict[str, Any] | None = None
        self.json_text = json_text
        #: the previous body's lists as orjson writes them, by key (when ``json_text``; None: it cannot)
        self.texts: dict[str, bytes | None] = {}

    def share(self, body: Any) -> None:
        """Put the previous body's objects in ``body`` where it repeats them (in place)."""
        if type(body) is not dict:
            return
        previous, self.previous = self.previous, body
        texts_before, self.texts = self.texts, {}
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
            elif equal(value, before):
                body[key] = before  # a value of a key already there: the dict's size does not change


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
