"""What a request body sends back of earlier turns (``Echo``), read once for what is new.

Every request of an agent session repeats the history before it, so reading each whole (its facts,
a digest per message) costs the square of the turns over a session. A ``Reading`` keeps what was read
of a conversation's latest request; the next request is read from where it stops repeating it: its
facts by ``conversation.requests.History`` (the incremental parser: the same facts as a whole read),
and its digests by the history list's bytes as orjson writes them (``capture.repeats``: a list whose
text starts with the previous list's items' text holds those items, so their digests are the previous
ones). An edited history is read whole. The body is never written into: the proxy records it as read.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Iterable, Protocol

import orjson

from stream_doctor.capture.repeats import list_text, text_repeats
from stream_doctor.util import jsontext
from stream_doctor.values.events import MessageStart, ToolStart

#: The keys of a request's history, the first that holds a list counted (``messages``, ``contents``, ``input``)
HISTORY_KEYS = ("messages", "contents", "input")


@dataclass
class Echo:
    """What a request body sends back of earlier turns."""

    call_ids: frozenset[str]  # calls it sends back, and the calls its results answer
    previous_response_id: str | None
    history: tuple[bytes, ...]  # a digest per message (``messages``, ``contents``, ``input`` items)
    roles: tuple[str | None, ...]


NOTHING = Echo(frozenset(), None, (), ())


class Reading:
    """One conversation's latest request as the grouping read it: the next one is read for what is new."""

    def __init__(self) -> None:
        self.requests: Any = None  # ``conversation.requests.History``, made for the first provider read
        self.provider: str | None = None
        self.text: bytes | None = None  # the latest history list as orjson writes it
        self.echo = NOTHING

    def repeats(self, text: bytes | None) -> bool:
        """Whether a history written ``text`` starts with every message of this reading's latest."""
        return text_repeats(self.text, text)

    def read(self, provider: str | None, body: Any, text: bytes | None) -> Echo:
        """``body``'s echo (``text``: its history list's, ``history_text``); this reading moves on to it."""
        ids: set[str] = set()
        previous: str | None = None
        if provider is not None and isinstance(body, dict):
            if self.requests is None or self.provider != provider:
                from stream_doctor.conversation.requests import History

                self.requests, self.provider = History(provider), provider
            facts = self.requests.parse(body)
            ids = {c.call_id for c in facts.calls if c.call_id} | {r.call_id for r in facts.results if r.call_id}
            previous = facts.previous_response_id
        messages = _history(body)
        known = len(self.echo.history) if text_repeats(self.text, text) else 0
        history, roles = list(self.echo.history[:known]), list(self.echo.roles[:known])
        for message in messages[known:]:
            # jsontext: a message nested deeper than orjson writes (254 levels) is still one digest
            history.append(hashlib.blake2b(jsontext.dumps(message, orjson.OPT_SORT_KEYS), digest_size=16).digest())
            role = message.get("role") if isinstance(message, dict) else None
            if role is None and isinstance(message, dict) and message.get("type") == "function_call":
                role = "assistant"  # Responses: an output item sent back
            roles.append(role if isinstance(role, str) else None)
        self.text = text
        self.echo = Echo(frozenset(ids), previous, tuple(history), tuple(roles))
        return self.echo


class HoldsReading(Protocol):
    """A conversation as a grouping keeps it: the reading of its latest request (None once given away)."""

    reading: Reading | None


def reading_for(text: bytes | None, holders: Iterable[HoldsReading]) -> Reading:
    """The reading of the first of ``holders`` whose latest request a history written ``text`` repeats, taken
    from it (the request most likely continues that conversation, and the reading moves on to it: a later
    request of the one it was taken from is read whole), else a new reading."""
    for holder in holders:
        reading = holder.reading
        if reading is not None and reading.repeats(text):
            holder.reading = None
            return reading
    return Reading()


def continues(echo: Echo, history: tuple[bytes, ...], calls: frozenset[str], messages: frozenset[str]) -> bool:
    """Whether a request that sends back ``echo`` continues the conversation whose latest request sent
    ``history`` and whose latest answer carried the call ids ``calls`` and the message ids ``messages``: it
    sends one of those calls back (or a result for it), names that response (``previous_response_id``), or
    repeats that history followed by an assistant message (the answer, sent back as text). The one rule of
    the recording proxy's grouping and of ``serve``'s reading of a capture's conversations."""
    if echo.previous_response_id is not None and echo.previous_response_id in messages:
        return True
    if echo.call_ids & calls:
        return True
    known = len(history)
    return (
        0 < known < len(echo.history)
        and echo.history[:known] == history
        and echo.roles[known] in ("assistant", "model")
    )


def carried(events: Iterable[Any], calls: set[str], messages: set[str]) -> bool:
    """Adds to ``calls`` and ``messages`` the call ids and message ids that translated stream ``events``
    carry: what a later request sends back to continue their conversation (``continues``). Whether any
    was found."""
    found = False
    for event in events:
        if type(event) is ToolStart and event.call_id:
            calls.add(event.call_id)
            found = True
        elif type(event) is MessageStart and event.message_id:
            messages.add(event.message_id)
            found = True
    return found


def history_text(body: Any) -> bytes | None:
    """``body``'s history list as orjson writes it (None: none, or one orjson cannot write)."""
    messages = _history(body)
    return list_text(messages) if messages else None


def echo_of(provider: str | None, body: Any) -> Echo:
    """``body``'s echo, read whole."""
    return Reading().read(provider, body, None)


def _history(body: Any) -> list[Any]:
    if isinstance(body, dict):
        for key in HISTORY_KEYS:
            if isinstance(body.get(key), list):
                return body[key]  # type: ignore[no-any-return]
    return []
