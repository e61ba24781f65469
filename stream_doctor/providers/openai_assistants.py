"""OpenAI Assistants streaming (``POST /v1/threads/runs``, ``/v1/threads/{id}/runs``, ``…/submit_tool_outputs``
with ``"stream": true``; the Assistants API is in beta and deprecated in favour of Responses).

Wire format: the Assistants streaming reference ("Assistant stream events") and openai-python's
``lib/streaming/_assistants.py`` (``AssistantEventHandler``, ``accumulate_run_step``). Every event is an
``event:`` line naming it and a ``data:`` line holding the object it is about, and the stream ends with
``event: done`` / ``data: [DONE]``:

* ``thread.run.created``, ``.queued``, ``.in_progress``: the run (``object: "thread.run"``);
* ``thread.run.step.created`` / ``.in_progress`` / ``.completed`` (``object: "thread.run.step"``) and
  ``thread.run.step.delta`` (``object: "thread.run.step.delta"``): a ``tool_calls`` step streams its calls as
  ``delta.step_details.tool_calls[]`` entries keyed by ``index``, the first with ``id``, ``type`` and
  ``function.name``, then ``function.arguments`` fragments (openai-python concatenates them by index);
  a ``code_interpreter`` call streams its ``input`` the same way;
* ``thread.run.requires_action``: the run waits for the outputs of ``required_action.submit_tool_outputs
  .tool_calls`` (each whole): the calls are complete, and the turn ends waiting for tool results;
* ``thread.message.created`` / ``.delta`` / ``.completed``: the assistant's text, ``delta.content[]`` by index;
* ``thread.run.completed``, ``.incomplete`` (``incomplete_details.reason``), ``.failed``, ``.cancelling``,
  ``.cancelled``, ``.expired``; ``error`` (an error object).

The ``submit_tool_outputs`` stream that continues a run opens with ``thread.run.step.completed`` of the step
whose calls the previous stream made: a step this stream did not start is not a block of its own.
"""

from __future__ import annotations

from typing import Any, Sequence

from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.providers.base import FeedByFeed
from stream_doctor.providers.openai_assistants_protocol import WORDS
from stream_doctor.values.events import (
    ArgsDelta,
    BlockDelta,
    BlockStart,
    BlockStop,
    Event,
    Finish,
    FinishCategory,
    Malformed,
    MessageStart,
    MessageStop,
    StreamError,
    ToolStart,
    Unknown,
)
from stream_doctor.values.protocol import EventWords, ProtocolFacts, StreamEnd

name = "openai-assistants"
title = "OpenAI Assistants runs (thread.run.* events)"

protocol = ProtocolFacts(
    EventWords(
        message_start="thread.run.created",
        call_start="the first thread.run.step.delta of a tool call",
        fragment="thread.run.step.delta",
        call_end="thread.run.step.completed (or thread.run.requires_action)",
        stream_end="event: done",
        stop_reason="the run's status",
    ),
    positional_indices=False,
    stream_end=StreamEnd(events=frozenset({"done"}), sentinels=frozenset({"[DONE]"})),
)

#: How a run ends, by its event.
RUN_ENDS: dict[str, tuple[str, FinishCategory]] = {
    "thread.run.requires_action": ("requires_action", "tool_calls"),
    "thread.run.completed": ("completed", "end"),
    "thread.run.incomplete": ("incomplete", "length"),
    "thread.run.failed": ("failed", "error"),
    "thread.run.cancelled": ("cancelled", "other"),
    "thread.run.expired": ("expired", "other"),
}

#: Events that only report progress (the objects they carry are restated by later events).
PROGRESS = frozenset(
    {
        "thread.created",
        "thread.run.created",
        "thread.run.queued",
        "thread.run.in_progress",
        "thread.run.cancelling",
        "thread.run.step.created",
        "thread.run.step.in_progress",
        "thread.run.step.failed",
        "thread.run.step.cancelled",
        "thread.run.step.expired",
        "thread.message.created",
        "thread.message.in_progress",
        "thread.message.incomplete",
    }
)


def sniff(frames: Sequence[Frame]) -> int:
    """Objects of the thread family (``thread.run``, ``thread.run.step.delta`` …) under ``thread.*`` event names."""
    if not WORDS.heard(frames):
        return 0  # no frame holds a word of this protocol (what detection's ranking reads)
    seen = hits = 0
    for frame in frames:
        value = frame.value
        if not isinstance(value, dict):
            continue
        seen += 1
        kind = value.get("object")
        if isinstance(kind, str) and kind.startswith("thread"):
            hits += 2 if (frame.event or "").startswith("thread.") else 1
    if not seen or not hits:
        return 0
    return min(95, int(85 * hits / (2 * seen)) + 10)


def translator() -> AssistantsTranslator:
    return AssistantsTranslator()


class AssistantsTranslator(FeedByFeed):
    __slots__ = ("counts", "open", "calls", "texts")

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.open = False
        self.calls: dict[tuple[Any, int], tuple[str, Any, int]] = {}  # (step id, index) -> key, still open
        self.texts: dict[tuple[Any, int], tuple[str, Any, int]] = {}  # (message id, index) -> key, still open

    def close(self) -> list[Event]:
        return []

    def feed(self, frame: Frame) -> list[Event]:
        pos = frame.pos
        value = frame.value
        event = frame.event or (value.get("object") if isinstance(value, dict) else None) or ""
        if value is NOT_JSON:
            if frame.data.strip() == b"[DONE]":
                self._count("done")
                return self._end(pos)
            return [Malformed(pos, frame.error or "not JSON")]
        if not isinstance(value, dict):
            return [Malformed(pos, f"expected a JSON object, got {type(value).__name__}")]
        self._count(event)
        out: list[Event] = []
        if not self.open and event != "error":
            self.open = True
            run = value if value.get("object") == "thread.run" else {}
            model = run.get("model")
            out.append(MessageStart(pos, run.get("id"), model if isinstance(model, str) else None))
        if event == "thread.run.step.delta":
            out.extend(self._step_delta(pos, value))
        elif event == "thread.run.step.completed":
            step = value.get("id")
            out.extend(self._stop_calls(pos, lambda s: s == step))
        elif event == "thread.message.delta":
            out.extend(self._message_delta(pos, value))
        elif event == "thread.message.completed":
            message = value.get("id")
            for slot in [s for s in self.texts if s[0] == message]:
                out.append(BlockStop(pos, self.texts.pop(slot)))
        elif event in RUN_ENDS:
            reason, category = RUN_ENDS[event]
            out.extend(self._stop_calls(pos, lambda s: True))
            if event == "thread.run.failed":
                error = _dict(value.get("last_error"))
                out.append(StreamError(pos, _str(error.get("code")), _str(error.get("message"))))
            if event == "thread.run.incomplete":
                details = _dict(value.get("incomplete_details"))
                reason = _str(details.get("reason")) or reason
            out.append(Finish(pos, reason, category))
        elif event == "error":
            error = _dict(value.get("error")) or value
            out.append(StreamError(pos, _str(error.get("type")) or _str(error.get("code")), _str(error.get("message"))))
        elif event == "done":
            out.extend(self._end(pos))
        elif event not in PROGRESS and event != "thread.message.delta":
            out.append(Unknown(pos, event))
        return out

    def _step_delta(self, pos: Pos, value: dict[str, Any]) -> list[Event]:
        delta = _dict(value.get("delta"))
        details = _dict(delta.get("step_details"))
        calls = details.get("tool_calls")
        if details.get("type") != "tool_calls" or not isinstance(calls, list):
            return []
        step = value.get("id") if isinstance(value.get("id"), str) else ""
        out: list[Event] = []
        for call in calls:
            if not isinstance(call, dict) or type(call.get("index")) is not int:
                out.append(Malformed(pos, "a step_details.tool_calls[] entry without an integer index"))
                continue
            index: int = call["index"]
            kind: str = call["type"] if isinstance(call.get("type"), str) else "function"
            body = _dict(call.get(kind))
            slot = (step, index)
            key = self.calls.get(slot)
            if key is None:
                key = ("call", step, index)
                self.calls[slot] = key
                tool = body.get("name") if kind == "function" else kind
                out.append(ToolStart(pos, key, index, kind, _str(call.get("id")), _str(tool), None,
                                     server_side=kind != "function",
                                     input_format="json" if kind == "function" else "text"))  # fmt: skip
            fragment = body.get("arguments") if kind == "function" else body.get("input")
            if isinstance(fragment, str) and fragment:
                out.append(ArgsDelta(pos, key, fragment, "arguments" if kind == "function" else "input"))
        return out

    def _message_delta(self, pos: Pos, value: dict[str, Any]) -> list[Event]:
        delta = _dict(value.get("delta"))
        content = delta.get("content")
        if not isinstance(content, list):
            return []
        message = value.get("id") if isinstance(value.get("id"), str) else ""
        out: list[Event] = []
        for part in content:
            if not isinstance(part, dict) or type(part.get("index")) is not int:
                continue
            slot = (message, part["index"])
            key = self.texts.get(slot)
            if key is None:
                key = self.texts[slot] = ("text", message, part["index"])
                out.append(BlockStart(pos, key, part["index"], "text"))
            text = part.get("text")
            size = len(text.get("value") or "") if isinstance(text, dict) else 0
            out.append(BlockDelta(pos, key, "text", size))
        return out

    def _stop_calls(self, pos: Pos, which: Any) -> list[Event]:
        done = [slot for slot in self.calls if which(slot[0])]
        return [BlockStop(pos, self.calls.pop(slot)) for slot in done]

    def _end(self, pos: Pos) -> list[Event]:
        if not self.open:
            return []
        self.open = False
        out: list[Event] = [BlockStop(pos, key) for key in self.texts.values()]
        self.texts.clear()
        out.append(MessageStop(pos))
        return out

    def _count(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
