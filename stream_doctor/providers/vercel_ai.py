"""Vercel AI SDK UI message stream (AI SDK 5 and later: ``toUIMessageStreamResponse``, read by ``useChat``).

Wire format: ../shared/reference/wire-formats.md §8.1; the parts are the zod schemas of vercel/ai
``packages/ai/src/ui-message-stream/ui-message-chunks.ts`` and what the client does with them is
``packages/ai/src/ui/process-ui-message-stream.ts``. SSE ``data: {json}`` events (header
``x-vercel-ai-ui-message-stream: v1``) ending with ``data: [DONE]``.

How the parts map to stream-doctor's model:

- A message is one *step* (``start-step`` … ``finish-step``: one backend LLM call). The
  ``finish`` part's ``finishReason`` belongs to the last step; earlier steps carry none. Without
  step parts the whole stream is one message.
- Calls are keyed by ``toolCallId``. ``tool-input-start`` starts one, ``tool-input-delta``
  carries fragments, ``tool-input-available`` completes it and restates the parsed input; start
  and deltas are optional, so an ``available`` alone is a whole call. ``tool-input-error``
  completes it with an error (SD519). ``providerExecuted`` calls are server-side.
- ``tool-output-available`` / ``tool-output-error`` mean the server ran the tool: they are
  recorded as executions (with the input ``tool-input-available`` gave it), so an output for a
  call whose input never became available is a premature execution (SD101) and an output for an
  id the stream never started is an unknown call (SD104; the client throws "No tool invocation
  found for tool call ID"). Outputs of provider-executed tools and ``preliminary`` outputs are
  not executions by the application.
- ``reset-step`` (vercel/ai #18843) discards the step's partial parts: the step's message ends
  there, and calls still open are abandoned with that cause.
- Text and reasoning parts are keyed by their id *within a step*: the client forgets part ids at
  ``finish-step`` and providers reuse ``"0"`` in every step.
"""

from __future__ import annotations

from typing import Any, Sequence

from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.capture.problem_facts import ToolInputError
from stream_doctor.capture.runs import FRAGMENT, RunForm
from stream_doctor.providers.base import Batching
from stream_doctor.providers.fields import FieldCheck, Shape
from stream_doctor.providers.sniffing import score
from stream_doctor.providers.vercel_ai_protocol import KNOWN_TYPES, QUIET, STRONG, WORDS
from stream_doctor.values.events import (
    MISSING,
    ArgsDelta,
    BlockDelta,
    BlockStart,
    BlockStop,
    Event,
    Execution,
    Finish,
    FinishCategory,
    KeepAlive,
    Malformed,
    MessageStart,
    MessageStop,
    Problem,
    StreamError,
    ToolStart,
    Unknown,
)
from stream_doctor.values.protocol import EventWords, ProtocolFacts, StreamEnd

name = "vercel-ai"
title = "Vercel AI SDK UI message stream"
#: The UI message stream ends with ``data: [DONE]`` (wire-formats §0).
protocol = ProtocolFacts(
    EventWords(
        message_start="start-step",
        call_start="tool-input-start",
        fragment="tool-input-delta",
        call_end="tool-input-available",
        stream_end="a finish part",
        stop_reason="finishReason",
    ),
    positional_indices=False,
    stream_end=StreamEnd(sentinels=frozenset({"[DONE]"})),
)

#: ``finish.finishReason`` -> neutral category (the AI SDK's FinishReason union).
FINISH_CATEGORIES: dict[str, FinishCategory] = {
    "stop": "end",
    "length": "length",
    "content-filter": "filter",
    "tool-calls": "tool_calls",
    "error": "error",
    "other": "other",
    "unknown": "other",
}

#: The documented fields of each part (SD006 lists any other): the ``z.strictObject`` schemas of
#: vercel/ai ``packages/ai/src/ui-message-stream/ui-message-chunks.ts`` (``uiMessageChunkSchema``).
#: Parts the schema there does not list (newer ones such as ``custom``) are not checked; AI SDK 6 adds
#: ``inputEncoding`` to the tool-input parts (@ai-sdk/provider 3.0.19 changelog, see ``_start``).
_TEXT = Shape("type id providerMetadata")
_TOOL_INPUT = "type toolCallId toolName input providerExecuted providerMetadata dynamic title _meta inputEncoding"
SHAPES: dict[str, Shape] = {
    "text-start": _TEXT,
    "text-delta": Shape("type id delta providerMetadata"),
    "text-end": _TEXT,
    "reasoning-start": _TEXT,
    "reasoning-delta": Shape("type id delta providerMetadata"),
    "reasoning-end": _TEXT,
    "error": Shape("type errorText"),
    "tool-input-start": Shape(
        "type toolCallId toolName providerExecuted providerMetadata dynamic title _meta inputEncoding"
    ),
    "tool-input-delta": Shape("type toolCallId inputTextDelta"),
    "tool-input-available": Shape(_TOOL_INPUT),
    "tool-input-error": Shape(_TOOL_INPUT + " errorText"),
    "tool-approval-request": Shape("type approvalId toolCallId"),
    "tool-output-available": Shape("type toolCallId output providerExecuted dynamic preliminary"),
    "tool-output-error": Shape("type toolCallId errorText providerExecuted dynamic"),
    "tool-output-denied": Shape("type toolCallId"),
    "source-url": Shape("type sourceId url title providerMetadata"),
    "source-document": Shape("type sourceId mediaType title filename providerMetadata"),
    "file": Shape("type url mediaType providerMetadata"),
    "start-step": Shape("type"),
    "finish-step": Shape("type"),
    "start": Shape("type messageId messageMetadata"),
    "finish": Shape("type finishReason messageMetadata"),
    "abort": Shape("type reason"),
    "message-metadata": Shape("type messageMetadata"),
}
DATA_PART = Shape("type id data transient")

#: The client drops a step's partial parts at ``reset-step``; this is the cause SD301 prints.
RESET_CAUSE = "the step was reset (reset-step)"
ABORT_CAUSE = "the stream was aborted (abort)"


#: The tool-input-delta part as the AI SDK writes it (``capture/runs.py``): type, toolCallId,
#: inputTextDelta in this order, no whitespace (``JsonToSseTransformStream``: ``data: ${JSON.stringify(part)}``).
#: A run of them for one call, differing only in the fragment, is read without a Frame per part.
run_form = RunForm(
    "vercel-ai tool-input-delta",
    rb'data: \{"type":"tool-input-delta","toolCallId":"[^"\\\x00-\x1f]++","inputTextDelta":"(?P<fragment>'
    + FRAGMENT
    + rb')"\}\n\n',
)


def sniff(frames: Sequence[Frame]) -> int:
    """UI message stream parts are objects whose ``type`` is one of the part names (or ``data-…``)."""
    return score(frames, WORDS, _weigh)


def _weigh(frame: Frame) -> int:
    value = frame.value
    kind = value.get("type")
    if not isinstance(kind, str):
        return 0
    if kind in STRONG:
        return 2
    if kind == "error":
        return 1 if "errorText" in value else 0
    return 1 if kind in KNOWN_TYPES or kind.startswith("data-") else 0


def translator() -> UIStreamTranslator:
    return UIStreamTranslator()


class UIStreamTranslator(Batching):
    __slots__ = (
        "counts", "message_id", "opened", "open", "stop_pending", "step", "started", "inputs", "provider_run",
        "fields",
    )  # fmt: skip

    fragment_event = "tool-input-delta"
    delta_type = "tool-input-delta"

    def __init__(self) -> None:
        self.counts: dict[str, int] = {"tool-input-delta": 0}
        self.fields = FieldCheck()
        self.message_id: str | None = None
        self.opened = False  # a message was opened at some point
        self.open = False  # a message is open now
        self.stop_pending: Pos | None = None  # finish-step seen: the step ends at the next step or finish
        self.step = 0
        self.started: set[str] = set()  # toolCallIds with a start (or a whole call)
        self.inputs: dict[str, Any] = {}  # toolCallId -> the input tool-input-available gave it
        self.provider_run: set[str] = set()  # toolCallIds the provider executes

    def close(self) -> list[Event]:
        return []

    def fast_fragment(self, frame: Frame) -> tuple[str, str] | None:
        """A tool-input-delta with its three fields only, in an open message (see ``base.Batching``)."""
        value = frame.value
        try:
            if value["type"] == "tool-input-delta" and self.open and len(value) == 3:
                fragment = value["inputTextDelta"]
                key = value["toolCallId"]
                if type(fragment) is str and type(key) is str:
                    return key, fragment
        except (KeyError, TypeError):
            pass
        return None

    def _feed(self, frame: Frame) -> list[Event]:
        pos = frame.pos
        value = frame.value
        out: list[Event] = []
        if value is NOT_JSON:
            if frame.data.strip() == b"[DONE]":
                self.counts["[DONE]"] = self.counts.get("[DONE]", 0) + 1
                if self.open:
                    out.append(MessageStop(self.stop_pending or pos))
                    self.open, self.stop_pending = False, None
                else:
                    out.append(KeepAlive(pos, "[DONE]"))
                return out
            return [Malformed(pos, frame.error or "not JSON")]
        if not isinstance(value, dict):
            return [Malformed(pos, f"expected a JSON object, got {type(value).__name__}")]
        kind = value.get("type")
        if not isinstance(kind, str):
            return [Malformed(pos, "part without a string 'type'")]
        self.counts[kind] = self.counts.get(kind, 0) + 1
        shape = DATA_PART if kind.startswith("data-") else SHAPES.get(kind)
        if shape is not None:
            out.extend(self.fields.check(pos, value, shape, kind))
        if kind == "start":
            self.message_id = _str(value.get("messageId")) or self.message_id
            if not self.open:
                self._open(pos, out)
            return out
        if kind == "start-step":
            if self.stop_pending is not None:
                out.append(MessageStop(self.stop_pending))
                self.open, self.stop_pending = False, None
            if not self.open:
                self._open(pos, out)
            self.step += 1
            return out
        if not self.opened:  # `start` and the step parts are optional (sendStart: false)
            self._open(pos, out)
        if kind in QUIET or kind.startswith("data-"):
            pass
        elif kind.startswith("tool-"):
            self._tool(pos, kind, value, out)
        elif kind in ("text-start", "reasoning-start", "text-delta", "reasoning-delta", "text-end", "reasoning-end"):
            self._content(pos, kind, value, out)
        elif kind == "finish-step":
            if self.open:
                self.stop_pending = pos
        elif kind == "finish":
            reason = _str(value.get("finishReason"))
            if reason is not None:
                out.append(Finish(pos, reason, FINISH_CATEGORIES.get(reason, "other")))
            if self.open:
                out.append(MessageStop(pos))
                self.open, self.stop_pending = False, None
        elif kind == "error":
            out.append(StreamError(pos, None, _str(value.get("errorText"))))
        elif kind == "reset-step":
            if self.open:
                out.append(MessageStop(pos, RESET_CAUSE))
            self.open, self.stop_pending = False, None
            self._open(pos, out)
        elif kind == "abort":
            if self.open:
                out.append(MessageStop(pos, ABORT_CAUSE))
                self.open, self.stop_pending = False, None
        else:
            out.append(Unknown(pos, kind))
        return out

    def _open(self, pos: Pos, out: list[Event]) -> None:
        out.append(MessageStart(pos, self.message_id))
        self.opened = self.open = True

    def _content(self, pos: Pos, kind: str, value: dict[str, Any], out: list[Event]) -> None:
        part_id = value.get("id")
        if not isinstance(part_id, str):
            out.append(Malformed(pos, f"{kind} without a string 'id'"))
            return
        what, _, stage = kind.partition("-")
        key = f"{what} {part_id!r} (step {self.step})"
        if stage == "start":
            out.append(BlockStart(pos, key, None, what))
        elif stage == "delta":
            delta = value.get("delta")
            out.append(BlockDelta(pos, key, kind, len(delta) if isinstance(delta, str) else 1))
        else:
            out.append(BlockStop(pos, key))

    def _tool(self, pos: Pos, kind: str, value: dict[str, Any], out: list[Event]) -> None:
        if kind not in KNOWN_TYPES:
            out.append(Unknown(pos, kind))
            return
        call_id = value.get("toolCallId")
        if not isinstance(call_id, str):
            out.append(Malformed(pos, f"{kind} without a string 'toolCallId'"))
            return
        if value.get("providerExecuted") is True:
            self.provider_run.add(call_id)
        if kind == "tool-input-delta":
            fragment = value.get("inputTextDelta")
            if not isinstance(fragment, str):
                out.append(Malformed(pos, "tool-input-delta whose 'inputTextDelta' is not a string"))
                return
            out.append(ArgsDelta(pos, call_id, fragment, kind))
        elif kind == "tool-input-start":
            self._start(pos, call_id, value, out)
        elif kind == "tool-input-available":
            whole = call_id not in self.started
            if whole:
                self._start(pos, call_id, value, out)
            given = value.get("input", MISSING)
            if given is not MISSING:
                self.inputs[call_id] = given
            out.append(BlockStop(pos, call_id, final_input=given))
        elif kind == "tool-input-error":
            whole = call_id not in self.started
            if whole:
                self._start(pos, call_id, value, out)
            given = value.get("input", MISSING)
            if whole and isinstance(given, str):  # the raw text the model produced (the SDK's rawInput)
                out.append(BlockStop(pos, call_id, final_arguments=given))
            elif whole:
                out.append(BlockStop(pos, call_id, final_input=given))
            else:
                out.append(BlockStop(pos, call_id))
            facts = ToolInputError(_str(value.get("toolName")) or "?", call_id, _str(value.get("errorText")))
            out.append(Problem(pos, "tool-input-error", "", facts))
        elif value.get("preliminary") is True:
            pass  # a streamed partial output; the final one follows
        elif call_id in self.provider_run and call_id in self.started:
            pass  # the provider ran it (a hosted tool), not the application
        else:  # tool-output-available / tool-output-error: the server ran the tool
            out.append(Execution(pos, call_id, None, self.inputs.get(call_id)))

    def _start(self, pos: Pos, call_id: str, value: dict[str, Any], out: list[Event]) -> None:
        self.started.add(call_id)
        # AI SDK 6 marks raw text input (OpenAI custom tools) with `inputEncoding: "text"`
        # (@ai-sdk/provider 3.0.19 changelog): its deltas are not JSON.
        text = value.get("inputEncoding") == "text"
        out.append(
            ToolStart(
                pos,
                call_id,
                None,
                "dynamic-tool" if value.get("dynamic") is True else "tool",
                call_id,
                _str(value.get("toolName")),
                None,
                value.get("providerExecuted") is True,
                input_format="text" if text else "json",
            )
        )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
