"""No frame, however odd, makes any adapter raise: wrong types where the provider sends objects,
strings or numbers, missing fields, deep nesting. A bad frame becomes a finding, not a traceback."""

from __future__ import annotations

from typing import Any

import pytest

from stream_doctor.accumulate.accumulator import Accumulator
from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.providers import ADAPTERS
from tests.helpers import accumulated

ODD_VALUES: list[Any] = [None, True, 0, -1, 1.5, "", "x", [], [1], {}, {"a": None}, ["type"], {"type": None}]
FIELDS = [
    "type", "index", "delta", "content_block", "message", "choices", "candidates", "item", "item_id",
    "output_index", "arguments", "partial_json", "toolCallId", "inputTextDelta", "function", "tool_calls",
    "id", "name", "input", "args", "functionCall", "finish_reason", "stop_reason", "error", "response",
    "contentBlockIndex", "start", "messageStop", "contentBlockDelta", "contentBlockStart", "done", "chunk",
]  # fmt: skip
TYPES = [
    "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
    "error", "response.output_item.added", "response.function_call_arguments.delta",
    "response.function_call_arguments.done", "response.output_item.done", "response.completed",
    "tool-input-start", "tool-input-delta", "tool-input-available", "tool-call-start", "tool-call-delta",
    "tool-call-end", "message-end", "finish",
]  # fmt: skip


def hostile_values() -> list[Any]:
    values: list[Any] = list(ODD_VALUES)
    for field in FIELDS:
        for odd in ODD_VALUES:
            values.append({field: odd})
            for kind in TYPES:
                values.append({"type": kind, field: odd})
    values.append({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta"}})
    values.append({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": None}]}}]})
    values.append({"choices": [{"delta": {"tool_calls": [None, {"id": 5}, {"function": {"arguments": 7}}]}}]})
    return values


def frames(values: list[Any]) -> list[Frame]:
    return [Frame(Pos(n, n, n), b"{}", value, None, None) for n, value in enumerate(values, 1)] + [
        Frame(Pos(len(values) + 1, 0, 0), b"[DONE]", NOT_JSON, "not JSON"),
    ]


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_hostile_frames_never_raise(name: str) -> None:
    adapter = ADAPTERS[name]
    sample = frames(hostile_values())
    adapter.sniff(sample)
    for event_frame in (f for f in sample):
        adapter.sniff([event_frame])
    translator = adapter.translator()
    accumulator = Accumulator(adapter.protocol.positional_indices)
    for frame in sample:
        accumulator.feed_all(translator.feed(frame))
    accumulator.feed_all(translator.close())
    accumulated(adapter, frames(hostile_values()))  # the replay's own stages: the hot path, then the stream
