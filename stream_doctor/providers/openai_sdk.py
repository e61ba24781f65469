"""OpenAI SDK helper-stream logs: what an application logs while iterating ``chat.completions.stream()``.

openai-python's ``ChatCompletionStream`` (``lib/streaming/chat/_completions.py``) yields, per chunk,
a ``chunk`` event (``chunk``: the raw chunk, ``snapshot``: the completion so far), then events of its
own: ``content.delta``/``.done``, ``refusal.*``, ``logprobs.*`` and
``tool_calls.function.arguments.delta`` (``name``, ``index``, ``arguments``: the text so far,
``parsed_arguments``, ``arguments_delta``) and ``tool_calls.function.arguments.done`` (``name``,
``index``, ``arguments``, ``parsed_arguments``). A log holds one ``event.model_dump_json()`` per line.

The raw chunks are read by the OpenAI Chat adapter; every ``arguments``/``parsed_arguments`` the
helper reported becomes a ``HelperSnapshot`` the accumulator checks against the fragments so far.
"""

from __future__ import annotations

from typing import Any, Hashable, Sequence

import orjson

from stream_doctor.capture.base import Frame
from stream_doctor.events import MISSING, Event, HelperSnapshot, Malformed, MessageStop
from stream_doctor.providers import openai_chat as raw
from stream_doctor.providers.base import FeedByFeed
from stream_doctor.providers.sniffing import score

name = "openai-sdk"
title = "OpenAI SDK chat.completions.stream() log"
protocol = raw.protocol

ARGUMENTS = ("tool_calls.function.arguments.delta", "tool_calls.function.arguments.done")

#: The helper's own events, built from the chunk before them.
HELPER_EVENTS = frozenset(
    {
        *ARGUMENTS,
        "content.delta",
        "content.done",
        "refusal.delta",
        "refusal.done",
        "logprobs.content.delta",
        "logprobs.content.done",
        "logprobs.refusal.delta",
        "logprobs.refusal.done",
    }
)


def _weigh(frame: Frame) -> int:
    kind = frame.value.get("type")
    if not isinstance(kind, str):
        return 0
    if kind == "chunk" and isinstance(frame.value.get("chunk"), dict) and "snapshot" in frame.value:
        return 2
    return 2 if kind in HELPER_EVENTS else 0


def sniff(frames: Sequence[Frame]) -> int:
    """``chunk`` events wrapping a chunk and a snapshot, and the helper's own dotted event types."""
    return score(frames, _weigh)


def translator() -> OpenAISdkTranslator:
    return OpenAISdkTranslator()


class OpenAISdkTranslator(FeedByFeed):
    __slots__ = ("counts", "raw")

    def __init__(self) -> None:
        self.raw = raw.OpenAIChatTranslator()
        self.counts = self.raw.counts

    def close(self) -> list[Event]:
        """openai-python's stream consumes the ``[DONE]`` itself, so a helper log never holds one: a log
        that ends once every choice has its finish reason is a whole turn; otherwise it was cut."""
        if self.raw.open and self.raw.choices and self.raw._all_finished() and self.raw.last_stop_pos is not None:
            self.raw.open = False
            return [MessageStop(self.raw.last_stop_pos)]
        return self.raw.close()

    def feed(self, frame: Frame) -> list[Event]:
        value: Any = frame.value
        kind = value.get("type") if isinstance(value, dict) else None
        kind = kind if isinstance(kind, str) else None
        if kind == "chunk":
            chunk = value.get("chunk")
            if not isinstance(chunk, dict):
                return [Malformed(frame.pos, "a chunk event without a chunk object")]
            inner = Frame(frame.pos, orjson.dumps(chunk), chunk, t=frame.t, interaction=frame.interaction)
            return self.raw._feed(inner)
        if kind not in HELPER_EVENTS:
            return self.raw._feed(frame)  # whatever it is, the chat adapter says what it makes of it
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if kind not in ARGUMENTS:
            return []
        key = self._key(value.get("index"))
        if key is None:
            return []
        arguments = value.get("arguments")
        parsed = value.get("parsed_arguments")
        return [
            HelperSnapshot(
                frame.pos,
                key,
                kind[len("tool_calls.function.") :],
                arguments if isinstance(arguments, str) else None,
                parsed if parsed is not None else MISSING,
                kind.endswith(".done"),
            )
        ]

    def _key(self, index: Any) -> Hashable | None:
        """The call the helper means: its events name the tool call's index, not the choice (the
        helper's events are for the first choice's calls)."""
        choice = self.raw.choices.get(0)
        if choice is None or type(index) is not int:
            return None
        return choice.by_index.get(index)
