"""The generated streams of the differential tests draw every dimension issue 33 names at 100 examples per
family (the tally's CI count, derandomized): each field of the event-stream grammar, JSON as each parser
reads it, every documented event type and the lists' cardinality. A dimension a change stops drawing fails
here, not silently in the tally."""

from __future__ import annotations

import collections
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.clients.grammar import REFUSED
from tests.clients.streams import anthropic_streams, chat_streams

GRAMMAR = {
    "LF line ends",
    "CR line ends",
    "CRLF line ends",
    "a BOM",
    "a comment line",
    "a comment-only block",
    "an id field",
    "a retry field",
    "an unknown field",
    "a field with no colon",
    "event line after the data",
    "data without a space after the colon",
    "a blank-line run",
    "JSON over several data lines",
    "JSON with whitespace",
    "JSON unicode escapes",
    "JSON with a duplicate key",
    *(f"JSON orjson refuses: {kind}" for kind in REFUSED),
}
ANTHROPIC = {
    "ping event",
    "error event",
    "thinking block",
    "text block before the calls",
    "text block between calls",
    "text block after the calls",
}
CHAT = {
    "text before the calls",
    "error chunk",
    "error chunk named error",
    "a second choice in chunks of its own",
    "a second choice in the first choice's chunk",
    "several index-less calls in one chunk",
}


def _drawn(strategy: Any) -> collections.Counter[str]:
    shapes: collections.Counter[str] = collections.Counter()

    @settings(max_examples=100, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        shapes.update(data.draw(strategy)[0])

    draw()
    return shapes


def test_every_dimension_is_drawn_at_100_examples_per_family() -> None:
    anthropic, chat, mistral = _drawn(anthropic_streams()), _drawn(chat_streams()), _drawn(chat_streams(mistral=True))
    assert ANTHROPIC - set(anthropic) == set()
    assert CHAT - set(chat) - set(mistral) == set()
    assert GRAMMAR - set(anthropic) - set(chat) - set(mistral) == set()
