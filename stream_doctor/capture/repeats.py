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
a history with the one before. Nothing writes into a body once it is read (writers copy it:
``exchange.redact_body``), so a shared object is only ever read.
"""

from __future__ import annotations

from typing import Any


class Repeats:
    """The previous request body of one capture, whose objects the next one shares."""

    def __init__(self) -> None:
        self.previous: dict[str, Any] | None = None

    def share(self, body: Any) -> None:
        """Put the previous body's objects in ``body`` where it repeats them (in place)."""
        if type(body) is not dict:
            return
        previous = self.previous
        self.previous = body
        if previous is None:
            return
        for key, value in body.items():
            before = previous.get(key)
            if before is None or before is value or type(before) is not type(value):
                continue
            if type(value) is list:
                if _share_prefix(before, value) == len(value) == len(before):
                    body[key] = before  # the same list again (``tools``): the list too
            elif value == before:
                body[key] = before  # a value of a key already there: the dict's size does not change


def _share_prefix(before: list[Any], items: list[Any]) -> int:
    """``items``' leading run of items equal to ``before``'s, replaced by ``before``'s; its length."""
    size = len(before)
    if len(items) >= size and items[:size] == before:  # the common case, one comparison in C
        items[:size] = before
        return size
    same = 0
    for old, new in zip(before, items, strict=False):  # an edited history: up to the first change
        if old is not new and old != new:
            break
        same += 1
    items[:same] = before[:same]
    return same
