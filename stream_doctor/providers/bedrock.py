"""AWS Bedrock streaming: ConverseStream, and InvokeModelWithResponseStream carrying Anthropic events.

Wire format: ../shared/reference/wire-formats.md §6 and botocore
``data/bedrock-runtime/2023-09-30/service-2.json`` (``ConverseStreamOutput`` and its members).
The events come in the binary ``application/vnd.amazon.eventstream`` framing (read by
``capture/eventstream.py``: the ``:event-type`` header names the event, the payload is the inner
object) or as JSON lines in the SDKs' wrapped single-key form (``{"contentBlockDelta": {…}}``, as
boto3 yields them and the AI SDK records them). Both are read here.

ConverseStream: ``messageStart``, then blocks keyed by ``contentBlockIndex`` (their position in
the final content), ``messageStop`` with the ``stopReason``, and ``metadata`` last. Only blocks that
are not text send a ``contentBlockStart``: a text or reasoning block begins with its first delta
(mulgadc/spinifex PR #844, checked live; the pydantic-ai Nova cassette shows it too), so that delta
starts the block here. A tool call starts at ``contentBlockStart.start.toolUse``, streams
``delta.toolUse.input`` text and is complete at ``contentBlockStop``; an input of ``""`` is ``{}``.
Exceptions arrive inside the 200 response as their own messages (``throttlingException`` …).

Points the reference left open, settled from the live bytes of the pydantic-ai cassette
``test_bedrock_model_iter_stream.yaml`` (Nova micro): Converse payloads do carry the ``p``
padding field that InvokeModel chunks have, and tool ids are ``tooluse_…``.

InvokeModelWithResponseStream: each ``chunk`` event's ``bytes`` is the base64 of one object in the
model's native stream format; ``bedrock_invoke.py`` routes it by family (Anthropic, Nova, the
OpenAI-shaped families, Cohere Command R, the text-only ones), at the chunk's position.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Sequence

import orjson

from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.capture.problem_facts import EmptyStartUnion, ToolCallRejected
from stream_doctor.capture.runs import FRAGMENT, RunForm
from stream_doctor.providers.base import Batching
from stream_doctor.providers.bedrock_invoke import InvokeChunks
from stream_doctor.providers.bedrock_protocol import CONVERSE_EVENTS, EXCEPTIONS, WORDS
from stream_doctor.providers.fields import FieldCheck, Shape
from stream_doctor.providers.sniffing import score
from stream_doctor.values.events import (
    ArgsDelta,
    BlockDelta,
    BlockStart,
    BlockStop,
    Event,
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

name = "bedrock"
title = "AWS Bedrock (ConverseStream, InvokeModelWithResponseStream)"
DELTA_TYPE = "toolUse.input"

#: ``messageStop`` ends the message and ``metadata`` (usage) comes last (wire-formats §6.2); an
#: exception event ends the stream too.
protocol = ProtocolFacts(
    EventWords(
        message_start="messageStart",
        call_start="contentBlockStart",
        fragment="contentBlockDelta",
        call_end="contentBlockStop",
        stream_end="messageStop",
        stop_reason="stopReason",
    ),
    positional_indices=True,
    stream_end=StreamEnd(events=frozenset({"messageStop", "metadata"}) | EXCEPTIONS),
)

#: stopReason -> neutral category (botocore ``StopReason``).
FINISH_CATEGORIES: dict[str, FinishCategory] = {
    "tool_use": "tool_calls",
    "end_turn": "end",
    "stop_sequence": "end",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "guardrail_intervened": "filter",
    "content_filtered": "filter",
    "malformed_model_output": "error",
    "malformed_tool_use": "error",
}

#: Stop reasons that say Bedrock refused what the model produced as a tool call (SD526 says what each means).
TOOL_CALL_REJECTED = frozenset({"malformed_tool_use", "malformed_model_output"})

#: delta member -> the field whose size is kept (text-like deltas start their block implicitly).
CONTENT_DELTAS = {"text": None, "reasoningContent": "text", "citation": None, "image": None, "toolResult": None}

#: The documented fields of each Converse event (SD006 lists any other): the bedrock-runtime API
#: reference (``MessageStartEvent``, ``ContentBlockStartEvent``/``ContentBlockStart``,
#: ``ContentBlockDeltaEvent``/``ContentBlockDelta``, ``ContentBlockStopEvent``, ``MessageStopEvent``,
#: ``ConverseStreamMetadataEvent``: usage, metrics, trace, performanceConfig, serviceTier). ``p`` is
#: the padding Bedrock adds to every event-stream payload (wire-formats §6.4: an InvokeModel chunk is
#: ``{"bytes", "p"}``; the live Converse payloads of pydantic-ai's Nova cassette carry it too): part
#: of the framing, like OpenAI's ``obfuscation``, so it is read on every event.
SHAPES: dict[str, Shape] = {
    "messageStart": Shape("role p"),
    "contentBlockStart": Shape(
        "contentBlockIndex start p",
        {"start": Shape("toolUse toolResult image", {"toolUse": Shape("toolUseId name type")})},
    ),
    "contentBlockDelta": Shape(
        "contentBlockIndex delta p",
        {
            "delta": Shape(
                "text toolUse reasoningContent citation image toolResult",
                {"toolUse": Shape("input"), "reasoningContent": Shape("text redactedContent signature")},
            )
        },
    ),
    "contentBlockStop": Shape("contentBlockIndex p"),
    "messageStop": Shape("stopReason additionalModelResponseFields p"),
    "metadata": Shape("usage metrics trace performanceConfig serviceTier p"),
    "chunk": Shape("bytes p"),
}


#: The wrapped toolUse input delta as JSON lines hold it (``capture/runs.py``), no whitespace, its
#: index before the delta (the API's order: the AI SDK's recordings) or after it (botocore's shape
#: order: boto3's dicts dumped as they come). A run of them on one index, differing only in the
#: fragment, is read without a Frame per line.
_INDEX = rb'"contentBlockIndex":(?:0|[1-9][0-9]{0,8})'
run_form = RunForm(
    "bedrock contentBlockDelta toolUse",
    rb'\{"contentBlockDelta":\{(?:'
    + _INDEX
    + rb',)?"delta":\{"toolUse":\{"input":"(?P<fragment>'
    + FRAGMENT
    + rb')"\}\}(?:,'
    + _INDEX
    + rb")?\}\}\n",
)


def sniff(frames: Sequence[Frame]) -> int:
    """Converse events, wrapped (``{"contentBlockDelta": …}``) or named by their eventstream header."""
    return score(frames, WORDS, _weigh)


def _weigh(frame: Frame) -> int:
    event = frame.event
    named = event is not None
    if event is None and len(frame.value) == 1:
        event = next(iter(frame.value))
    if event == "chunk":
        # InvokeModel's chunk carries base64 ``bytes``; a Chat Completions chunk that a compatible server
        # names ``event: chunk`` does not
        body = frame.value if named else frame.value.get("chunk")
        return 2 if isinstance(body, dict) and "bytes" in body else 0
    return 2 if event in CONVERSE_EVENTS or event in EXCEPTIONS else 0


def translator() -> BedrockTranslator:
    return BedrockTranslator()


class BedrockTranslator(Batching):
    __slots__ = ("counts", "started", "invoke", "fields")

    fragment_event = "contentBlockDelta"
    delta_type = DELTA_TYPE

    def __init__(self) -> None:
        self.counts: dict[str, int] = {"contentBlockDelta": 0}
        self.fields = FieldCheck()
        self.started: set[int] = set()  # block indices of this message that have begun
        self.invoke: InvokeChunks | None = None  # InvokeModel chunks

    def close(self) -> list[Event]:
        return self.invoke.close() if self.invoke is not None else []

    def fast_fragment(self, frame: Frame) -> tuple[int, str] | None:
        """The common toolUse input fragment, read with plain subscripts (see ``base.Batching``)."""
        event = frame.event
        if event is not None and event != "contentBlockDelta":
            return None
        value = frame.value
        try:
            body = value["contentBlockDelta"] if event is None else value
            delta = body["delta"]
            tool = delta["toolUse"]
            fragment = tool["input"]
            index = body["contentBlockIndex"]
            if (
                type(fragment) is str
                and type(index) is int
                and (event is not None or len(value) == 1)
                # no field but contentBlockIndex, delta, the padding p, toolUse and input
                and (len(body) == 2 or (len(body) == 3 and "p" in body))
                and len(delta) == 1
                and len(tool) == 1
            ):
                return index, fragment
        except (KeyError, TypeError):
            pass
        return None

    def _feed(self, frame: Frame) -> list[Event]:
        pos = frame.pos
        value = frame.value
        if value is NOT_JSON:
            return [Malformed(pos, frame.error or "not JSON")]
        if not isinstance(value, dict):
            return [Malformed(pos, f"expected a JSON object, got {type(value).__name__}")]
        event = frame.event
        body: Any = value
        if event is None or (len(value) == 1 and event in value):
            if len(value) != 1:
                return [Malformed(pos, 'expected a single-key event object such as {"contentBlockDelta": {…}}')]
            event, body = next(iter(value.items()))
        assert event is not None
        self.counts[event] = self.counts.get(event, 0) + 1
        if not isinstance(body, dict):
            return [Malformed(pos, f"{event} is not an object")]
        shape = SHAPES.get(event)
        if shape is not None:
            found = self.fields.check(pos, body, shape, event)
            if found:
                return self._event(frame, event, body) + found
        return self._event(frame, event, body)

    def _event(self, frame: Frame, event: str, body: dict[str, Any]) -> list[Event]:
        pos = frame.pos
        if event == "contentBlockDelta":
            return self._delta(pos, body)
        if event == "contentBlockStart":
            return self._start(pos, body)
        if event == "contentBlockStop":
            index = body.get("contentBlockIndex")
            return [BlockStop(pos, index)] if type(index) is int else [_no_index(pos, event)]
        if event == "messageStart":
            self.started = set()
            return [MessageStart(pos, None, None)]
        if event == "messageStop":
            return self._stop(pos, body)
        if event == "metadata":
            return [KeepAlive(pos, "metadata")]  # usage and latency; comes after messageStop
        if event == "chunk":
            return self._chunk(frame, body)
        if event in EXCEPTIONS or event.endswith(("Exception", "Error")):
            message = body.get("message", body.get("Message"))
            original = body.get("originalMessage")
            if isinstance(original, str) and original:
                message = f"{message} ({original})" if message else original
            return [StreamError(pos, event, message if isinstance(message, str) else None)]
        return [Unknown(pos, event)]

    def _begin(self, pos: Pos, index: int, block_type: str) -> list[Event]:
        """Text and reasoning blocks have no contentBlockStart: their first delta begins them."""
        if index in self.started:
            return []
        self.started.add(index)
        return [BlockStart(pos, index, index, block_type)]

    def _start(self, pos: Pos, body: dict[str, Any]) -> list[Event]:
        index = body.get("contentBlockIndex")
        start = body.get("start")
        if type(index) is not int:
            return [_no_index(pos, "contentBlockStart")]
        if not isinstance(start, dict):
            return [Malformed(pos, "contentBlockStart without a start object")]
        self.started.add(index)
        tool = start.get("toolUse")
        if isinstance(tool, dict):
            return [
                ToolStart(
                    pos,
                    index,
                    index,
                    "toolUse",
                    _str(tool.get("toolUseId")),
                    _str(tool.get("name")),
                    None,
                    tool.get("type") == "server_tool_use",
                )
            ]
        if not start:
            return [
                BlockStart(pos, index, index, "empty start"),
                Problem(pos, "empty-start-union", "", EmptyStartUnion(index)),
            ]
        member = next(iter(start))
        result = start.get("toolResult")
        result_for = _str(result.get("toolUseId")) if isinstance(result, dict) else None
        return [BlockStart(pos, index, index, member, result_for)]

    def _delta(self, pos: Pos, body: dict[str, Any]) -> list[Event]:
        index = body.get("contentBlockIndex")
        delta = body.get("delta")
        if type(index) is not int:
            return [_no_index(pos, "contentBlockDelta")]
        if not isinstance(delta, dict) or not delta:
            return [Malformed(pos, "contentBlockDelta without a delta")]
        member = next(iter(delta))
        payload = delta[member]
        if member == "toolUse":
            fragment = payload.get("input") if isinstance(payload, dict) else None
            if type(fragment) is not str:
                return [Malformed(pos, "toolUse delta whose input is not a string")]
            return [ArgsDelta(pos, index, fragment, DELTA_TYPE)]
        if member not in CONTENT_DELTAS:
            return [Unknown(pos, f"contentBlockDelta/{member}")]
        field = CONTENT_DELTAS[member]
        if field is not None and isinstance(payload, dict):
            # reasoningContent: text pieces, then a signature (or redactedContent) for the block
            kind = next((k for k in ("text", "signature", "redactedContent") if k in payload), field)
            shown = f"{member}.{kind}"
            payload = payload.get(kind)
        else:
            shown = member
        size = len(payload) if isinstance(payload, str) else 1
        return self._begin(pos, index, member) + [BlockDelta(pos, index, shown, size)]

    @staticmethod
    def _stop(pos: Pos, body: dict[str, Any]) -> list[Event]:
        reason = _str(body.get("stopReason"))
        out: list[Event] = [Finish(pos, reason, FINISH_CATEGORIES.get(reason or "", "other"))]
        if reason is not None and reason in TOOL_CALL_REJECTED:
            out.append(Problem(pos, "tool-call-rejected", "", ToolCallRejected("stopReason", reason)))
        out.append(MessageStop(pos))
        return out

    def _chunk(self, frame: Frame, body: dict[str, Any]) -> list[Event]:
        encoded = body.get("bytes")
        if not isinstance(encoded, str):
            return [Malformed(frame.pos, "chunk without base64 'bytes'")]
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            return [Malformed(frame.pos, "chunk 'bytes' is not base64")]
        try:
            inner = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            return [Malformed(frame.pos, f"chunk bytes are not JSON: {exc.msg}")]
        if self.invoke is None:
            self.invoke = InvokeChunks(self._feed, self.counts)
        return self.invoke.feed(frame, raw, inner)


def _no_index(pos: Pos, kind: str) -> Malformed:
    return Malformed(pos, f"{kind} without an integer 'contentBlockIndex'")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
