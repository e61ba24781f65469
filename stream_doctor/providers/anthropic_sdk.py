"""Anthropic SDK helper-stream logs: what an application logs while iterating ``messages.stream()``.

The Python SDK's ``MessageStream`` yields the raw events (``message_start``,
``content_block_start``, ``content_block_delta``, ``message_delta``) and, after each delta, an
event of its own built from its running snapshot of the message (anthropic-sdk-python
``lib/streaming/_messages.py`` ``build_events``): ``text`` (text, snapshot), ``input_json``
(partial_json, snapshot: the input parsed so far), ``thinking``, ``signature``, ``citation``; its
``content_block_stop`` and ``message_stop`` carry the built block and message. A log holds one
``event.model_dump_json()`` per line (read by the ``jsonl`` container).

The raw events are read by the Anthropic adapter; each snapshot the helper reported for a tool
call becomes a ``HelperSnapshot`` that the accumulator checks against the fragments joined so far,
and each text snapshot (``text``, ``thinking``, ``signature``, the built text and thinking blocks)
one checked against the length and the latest delta of that block's wire deltas. Not compared:
``citation`` snapshots and the message of ``message_stop``.
"""

from __future__ import annotations

from typing import Any, Sequence

from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.capture.problem_facts import HelperLogWithoutDeltas
from stream_doctor.providers import anthropic as raw
from stream_doctor.providers.anthropic_protocol import HELPER_EVENTS, KNOWN_TYPES, SDK_WORDS
from stream_doctor.providers.base import FeedByFeed
from stream_doctor.providers.fields import Shape
from stream_doctor.providers.sniffing import score
from stream_doctor.util import jsontext
from stream_doctor.values.events import MISSING, BlockStop, Event, HelperSnapshot, Malformed, Problem

name = "anthropic-sdk"
title = "Anthropic SDK messages.stream() log"
protocol = raw.protocol

#: The helper's events and the fields it adds to raw ones (anthropic-sdk-python 2.12
#: ``lib/streaming/_types.py``: ``ContentBlockStopEvent.content_block``, ``MessageStopEvent.message``).
SHAPES = raw.with_fields(
    raw.SHAPES,
    "",
    {
        "content_block_stop": Shape("type index content_block"),
        "message_stop": Shape("type message"),
        "text": Shape("type text snapshot"),
        "input_json": Shape("type partial_json snapshot"),
        "thinking": Shape("type thinking snapshot"),
        "signature": Shape("type signature"),
        "citation": Shape("type citation snapshot"),
    },
)

#: Tool blocks whose built ``content_block`` carries the parsed input.
TOOL_BLOCKS = frozenset(raw.TOOL_BLOCKS)


def _is_tool(block: dict[str, Any]) -> bool:
    """A tool block by its type; a type that is a list or an object is none (and not hashable)."""
    kind = block.get("type")
    return isinstance(kind, str) and kind in TOOL_BLOCKS


def _weigh(frame: Frame) -> int:
    kind = frame.value.get("type")
    if not isinstance(kind, str):
        return 0
    if kind in HELPER_EVENTS and "snapshot" in frame.value:
        return 2
    if kind == "content_block_stop" and "content_block" in frame.value:
        return 2
    return 1 if kind in KNOWN_TYPES else 0


def sniff(frames: Sequence[Frame]) -> int:
    """Raw Messages events plus the helper's own (``text``/``input_json`` with a ``snapshot``, a
    ``content_block_stop`` with its ``content_block``): without one of those it is a plain capture."""
    if not any(_weigh(f) == 2 for f in frames if f.kind == "event" and isinstance(f.value, dict)):
        return 0
    return score(frames, SDK_WORDS, _weigh)


def translator() -> AnthropicSdkTranslator:
    return AnthropicSdkTranslator()


#: The helper's event -> the raw delta it follows.
HELPER_DELTA = {
    "text": "text_delta",
    "input_json": "input_json_delta",
    "thinking": "thinking_delta",
    "signature": "signature_delta",
    "citation": "citations_delta",
}

#: Wire delta type -> the block field it builds; ``signature_delta`` replaces the signature, the
#: others append (``accumulate_event`` in the SDK's ``_messages.py``).
TEXT_DELTAS = {"text_delta": "text", "thinking_delta": "thinking", "signature_delta": "signature"}


class _Text:
    """What the wire gave one text field of a block so far: its length and its latest delta."""

    __slots__ = ("length", "tail")

    def __init__(self, start: str) -> None:
        self.length = len(start)
        self.tail = start


class AnthropicSdkTranslator(FeedByFeed):
    __slots__ = ("counts", "raw", "last_delta", "texts", "deltas", "start_inputs", "without_deltas")

    def __init__(self) -> None:
        self.raw = raw.AnthropicTranslator(SHAPES)
        self.counts = self.raw.counts
        #: (index, delta type) of the raw delta on the line just before: the helper's events name no
        #: index, and ``build_events`` yields each right after the delta it was built from. One that
        #: does not follow its delta (a log that left the raw deltas out) is not compared: the log
        #: does not hold what it restates.
        self.last_delta: tuple[int, str] | None = None
        #: (block index, field) -> what the wire deltas carried; a text snapshot is compared with its
        #: length and its latest delta only, never with the whole text (see ``HelperSnapshot``).
        self.texts: dict[tuple[int, str], _Text] = {}
        self.deltas: dict[int, int] = {}  # block index -> raw deltas the log holds for it
        self.start_inputs: dict[int, Any] = {}  # tool block index -> the input its start event carried
        #: The log was found to leave out raw deltas (reported once per capture).
        self.without_deltas = False

    def close(self) -> list[Event]:
        return []

    def feed(self, frame: Frame) -> list[Event]:
        value: Any = frame.value
        kind = value.get("type") if isinstance(value, dict) and value is not NOT_JSON else None
        kind = kind if isinstance(kind, str) else None
        previous, self.last_delta = self.last_delta, None
        if kind not in HELPER_EVENTS and kind != "content_block_stop":
            if kind == "content_block_delta":
                self._delta(value)
            elif kind == "content_block_start":
                self._start(value)
            return self.raw._feed(frame)
        self.counts[kind] = self.counts.get(kind, 0) + 1
        pos = frame.pos
        if kind != "content_block_stop":
            found = self.raw.fields.check(pos, value, SHAPES[kind], kind)
            if previous is None or HELPER_DELTA.get(kind) != previous[1]:
                # ``build_events`` yields each helper event right after its raw delta: this one's is not
                # in the log (an application that logs only the helper's events).
                found = [*self._without_deltas(pos, kind), *found]
            if found:
                return [*self._helper(frame, kind, value, previous), *found]
        return self._helper(frame, kind, value, previous)

    def _helper(self, frame: Frame, kind: str, value: Any, previous: tuple[int, str] | None) -> list[Event]:
        """The helper's own event; ``previous``: the raw delta on the line before, if that was one."""
        pos = frame.pos
        if kind == "content_block_stop":
            out: list[Event] = []
            block = value.get("content_block")
            index = value.get("index")
            if not isinstance(block, dict) or type(index) is not int:
                pass  # no built block: nothing to compare it with
            elif not self.deltas.get(index):
                # None of its deltas in the log: nothing to compare it with. A tool block whose built
                # input is not its start's was built from deltas the log left out: the built input is
                # the call's (restated, not streamed), and the log's gap is reported.
                start = self.start_inputs.get(index, MISSING)
                if _is_tool(block) and "input" in block and not jsontext.equal(block["input"], start):
                    out.extend(self._without_deltas(pos, kind))
                    self.counts[kind] -= 1
                    events = self.raw._feed(frame)
                    for event in events:
                        if isinstance(event, BlockStop) and event.final_input is MISSING:
                            event.final_input = block["input"]
                    return out + events
            elif _is_tool(block) and "input" in block:
                out.append(
                    HelperSnapshot(pos, index, "content_block_stop.content_block.input", None, block["input"], True)
                )
            else:
                for field in ("text", "thinking", "signature"):
                    if field in block:
                        out.extend(self._text(pos, index, field, block[field], "content_block_stop.content_block."))
            self.counts[kind] -= 1  # the raw adapter counts it
            return out + self.raw._feed(frame)
        if previous is None or HELPER_DELTA.get(kind) != previous[1]:
            return []
        index = previous[0]
        if kind == "input_json":
            if "snapshot" not in value:
                return []
            return [HelperSnapshot(pos, index, "input_json.snapshot", None, value["snapshot"])]
        if kind in ("text", "thinking"):
            return self._text(pos, index, kind, value.get("snapshot", MISSING), kind + ".")
        if kind == "signature":  # the block's whole signature, not a running text
            return self._text(pos, index, kind, value.get("signature", MISSING), "")
        # citation: its snapshot (the block's citations so far) is not compared
        return []

    def _start(self, value: dict[str, Any]) -> None:
        """A new block at this index: what its start event carried is where its text begins."""
        index, block = value.get("index"), value.get("content_block")
        if type(index) is int:
            self.deltas[index] = 0
            if isinstance(block, dict) and _is_tool(block):
                self.start_inputs[index] = block.get("input", MISSING)
        if type(index) is int and isinstance(block, dict):
            for field in ("text", "thinking", "signature"):
                start = block.get(field)
                if isinstance(start, str):
                    self.texts[(index, field)] = _Text(start)
                else:
                    self.texts.pop((index, field), None)

    def _without_deltas(self, pos: Pos, kind: str) -> list[Event]:
        """The first sign that the log leaves out the raw deltas: reported once per capture."""
        if self.without_deltas:
            return []
        self.without_deltas = True
        return [Problem(pos, "helper-log-without-deltas", "", HelperLogWithoutDeltas(kind))]

    def _delta(self, value: dict[str, Any]) -> None:
        index, delta = value.get("index"), value.get("delta")
        if type(index) is not int or not isinstance(delta, dict) or not isinstance(delta.get("type"), str):
            return
        self.last_delta = (index, delta["type"])
        self.deltas[index] = self.deltas.get(index, 0) + 1
        field = TEXT_DELTAS.get(delta["type"])
        if field is None:
            return
        payload = delta.get(field)
        if not isinstance(payload, str):
            return  # the raw adapter reports it
        text = self.texts.get((index, field))
        if text is None:
            text = self.texts[(index, field)] = _Text("")
        if field == "signature":
            text.length = len(payload)
        else:
            text.length += len(payload)
        text.tail = payload

    def _text(self, pos: Pos, index: int, field: str, snapshot: Any, prefix: str) -> list[Event]:
        """The helper's text of a block's field so far, against what the wire deltas carried."""
        text = self.texts.get((index, field))
        if snapshot is MISSING or text is None:
            return []
        name = prefix + ("snapshot" if prefix in ("text.", "thinking.") else field)
        if not isinstance(snapshot, str):
            return [Malformed(pos, f"the helper's {name} is a {type(snapshot).__name__}, not text")]
        return [HelperSnapshot(pos, index, name, snapshot, length=text.length, tail=text.tail)]
