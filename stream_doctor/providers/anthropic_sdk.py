"""Anthropic SDK helper-stream logs: what an application logs while iterating ``messages.stream()``.

The Python SDK's ``MessageStream`` yields the raw events (``message_start``,
``content_block_start``, ``content_block_delta``, ``message_delta``) and, after each delta, an
event of its own built from its running snapshot of the message (anthropic-sdk-python
``lib/streaming/_messages.py`` ``build_events``): ``text`` (text, snapshot), ``input_json``
(partial_json, snapshot: the input parsed so far), ``thinking``, ``signature``, ``citation``; its
``content_block_stop`` and ``message_stop`` carry the built block and message. A log holds one
``event.model_dump_json()`` per line (read by the ``jsonl`` container).

The raw events are read by the Anthropic adapter; each snapshot the helper reported for a tool
call becomes a ``HelperSnapshot`` that the accumulator checks against the fragments joined so far.
"""

from __future__ import annotations

from typing import Any, Sequence

from stream_doctor.capture.base import NOT_JSON, Frame
from stream_doctor.events import Event, HelperSnapshot
from stream_doctor.providers import anthropic as raw
from stream_doctor.providers.base import FeedByFeed
from stream_doctor.providers.sniffing import score

name = "anthropic-sdk"
title = "Anthropic SDK messages.stream() log"
protocol = raw.protocol

#: The helper's own events: each follows the content_block_delta it was built from.
HELPER_EVENTS = frozenset({"text", "input_json", "thinking", "signature", "citation"})

#: Tool blocks whose built ``content_block`` carries the parsed input.
TOOL_BLOCKS = frozenset(raw.TOOL_BLOCKS)


def _weigh(frame: Frame) -> int:
    kind = frame.value.get("type")
    if not isinstance(kind, str):
        return 0
    if kind in HELPER_EVENTS and "snapshot" in frame.value:
        return 2
    if kind == "content_block_stop" and "content_block" in frame.value:
        return 2
    return 1 if kind in raw.KNOWN_TYPES else 0


def sniff(frames: Sequence[Frame]) -> int:
    """Raw Messages events plus the helper's own (``text``/``input_json`` with a ``snapshot``, a
    ``content_block_stop`` with its ``content_block``): without one of those it is a plain capture."""
    if not any(_weigh(f) == 2 for f in frames if f.kind == "event" and isinstance(f.value, dict)):
        return 0
    return score(frames, _weigh)


def translator() -> AnthropicSdkTranslator:
    return AnthropicSdkTranslator()


class AnthropicSdkTranslator(FeedByFeed):
    __slots__ = ("counts", "raw", "last_delta_index")

    def __init__(self) -> None:
        self.raw = raw.AnthropicTranslator()
        self.counts = self.raw.counts
        self.last_delta_index: int | None = None  # the helper's events name no index: the delta's

    def close(self) -> list[Event]:
        return []

    def feed(self, frame: Frame) -> list[Event]:
        value: Any = frame.value
        kind = value.get("type") if isinstance(value, dict) and value is not NOT_JSON else None
        kind = kind if isinstance(kind, str) else None
        if kind not in HELPER_EVENTS and kind != "content_block_stop":
            if kind == "content_block_delta" and type(value.get("index")) is int:
                self.last_delta_index = value["index"]
            return self.raw._feed(frame)
        self.counts[kind] = self.counts.get(kind, 0) + 1
        pos = frame.pos
        if kind == "content_block_stop":
            out: list[Event] = []
            block = value.get("content_block")
            index = value.get("index")
            if isinstance(block, dict) and block.get("type") in TOOL_BLOCKS and "input" in block:
                out.append(
                    HelperSnapshot(pos, index, "content_block_stop.content_block.input", None, block["input"], True)
                )
            self.counts[kind] -= 1  # the raw adapter counts it
            return out + self.raw._feed(frame)
        if kind == "input_json":
            if "snapshot" not in value or self.last_delta_index is None:
                return []
            return [HelperSnapshot(pos, self.last_delta_index, "input_json.snapshot", None, value["snapshot"])]
        # text, thinking, signature, citation: restatements of the delta just read (its size is counted there)
        return []
