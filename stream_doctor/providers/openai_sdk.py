"""OpenAI SDK helper-stream logs: what an application logs while iterating ``chat.completions.stream()``.

openai-python's ``ChatCompletionStream`` (``lib/streaming/chat/_completions.py``) yields, per chunk,
a ``chunk`` event (``chunk``: the raw chunk, ``snapshot``: the completion so far), then events of its
own: ``content.delta``/``.done``, ``refusal.*``, ``logprobs.*`` and
``tool_calls.function.arguments.delta`` (``name``, ``index``, ``arguments``: the text so far,
``parsed_arguments``, ``arguments_delta``) and ``tool_calls.function.arguments.done`` (``name``,
``index``, ``arguments``, ``parsed_arguments``). A log holds one ``event.model_dump_json()`` per line.

The raw chunks are read by the OpenAI Chat adapter; every ``arguments``/``parsed_arguments`` the
helper reported (``parsed_arguments`` is jiter's partial parse, sent for ``strict`` tools), the
content and refusal of ``content.*``/``refusal.*`` and the content and arguments of each ``chunk``
event's ``snapshot`` become ``HelperSnapshot`` events the accumulator checks against the stream so
far. The helper's events name no choice: each is given to the choice the chunk before it made the
helper send it for. Not compared: ``logprobs.*``, the snapshot's other fields (ids, names, usage),
``parsed`` (structured outputs).
"""

from __future__ import annotations

from collections import deque
from typing import Any, Hashable, Sequence

from stream_doctor.capture.base import Frame, Pos
from stream_doctor.capture.problem_facts import HelperLogWithoutDeltas
from stream_doctor.providers import openai_chat as raw
from stream_doctor.providers.base import FeedByFeed
from stream_doctor.providers.fields import FieldCheck, Shape
from stream_doctor.providers.openai_chat_protocol import ARGS, HELPER_ARGUMENTS, HELPER_EVENTS, SDK_WORDS
from stream_doctor.providers.sniffing import score
from stream_doctor.util import jsontext
from stream_doctor.values.events import (
    MISSING,
    ArgsDelta,
    BlockStop,
    Event,
    HelperSnapshot,
    Malformed,
    MessageStart,
    MessageStop,
    Problem,
    ToolStart,
)

name = "openai-sdk"
title = "OpenAI SDK chat.completions.stream() log"
protocol = raw.protocol

#: The documented fields of the helper's events (SD006 lists any other): openai-python 3.54
#: ``lib/streaming/chat/_events.py``. The wrapped chunk is checked by the chat adapter.
SHAPES: dict[str, Shape] = {
    "chunk": Shape("type chunk snapshot"),
    "content.delta": Shape("type delta snapshot parsed"),
    "content.done": Shape("type content parsed"),
    "refusal.delta": Shape("type delta snapshot"),
    "refusal.done": Shape("type refusal"),
    "tool_calls.function.arguments.delta": Shape("type name index arguments parsed_arguments arguments_delta"),
    "tool_calls.function.arguments.done": Shape("type name index arguments parsed_arguments"),
    "logprobs.content.delta": Shape("type content snapshot"),
    "logprobs.content.done": Shape("type content"),
    "logprobs.refusal.delta": Shape("type refusal snapshot"),
    "logprobs.refusal.done": Shape("type refusal"),
}


def _weigh(frame: Frame) -> int:
    kind = frame.value.get("type")
    if not isinstance(kind, str):
        return 0
    if kind == "chunk" and isinstance(frame.value.get("chunk"), dict) and "snapshot" in frame.value:
        return 2
    return 2 if kind in HELPER_EVENTS else 0


def sniff(frames: Sequence[Frame]) -> int:
    """``chunk`` events wrapping a chunk and a snapshot, and the helper's own dotted event types."""
    return score(frames, SDK_WORDS, _weigh)


def translator() -> OpenAISdkTranslator:
    return OpenAISdkTranslator()


#: The helper's text fields of a message, and the block the chat adapter opens for each.
TEXT_FIELDS = {"content": "text", "refusal": "refusal"}


class _Text:
    """What the wire gave one text field of a choice so far: its length and its latest non-empty delta."""

    __slots__ = ("length", "tail", "seen", "done")

    def __init__(self) -> None:
        self.length = 0
        self.tail = ""
        self.seen = False  # a delta carried this field as text (even empty)
        self.done = False  # the helper sent its ``….done`` for it


class _HelperChoice:
    """openai-python's ``ChoiceEventState`` for one choice: which tool call is current, which calls and
    texts got their ``.done``, so each helper event can be given back to the choice it was built for."""

    __slots__ = ("current", "done", "finished", "texts")

    def __init__(self) -> None:
        self.current: int | None = None
        self.done: set[int] = set()
        self.finished = False
        self.texts = {"content": _Text(), "refusal": _Text()}


class OpenAISdkTranslator(FeedByFeed):
    __slots__ = (
        "counts",
        "raw",
        "helper",
        "expected",
        "fields",
        "chunks",
        "rebuilt",
        "rebuilt_done",
        "last_rebuilt_pos",
    )

    def __init__(self) -> None:
        self.raw = raw.OpenAIChatTranslator()
        self.counts = self.raw.counts
        self.helper: dict[int, _HelperChoice] = {}
        #: helper event type -> (choice, tool index) of each event the latest chunk makes the helper
        #: send, in the order it sends them (``ChatCompletionStreamState._build_events``).
        self.expected: dict[str, deque[tuple[int, int | None]]] = {}
        self.fields = FieldCheck()
        self.chunks = False  # the log holds a ``chunk`` event
        #: A log without chunks (an application that logs only the helper's events): tool index -> the
        #: call rebuilt from the helper's arguments events, and the ones their ``.done`` completed.
        self.rebuilt: dict[int, Hashable] = {}
        self.rebuilt_done: set[int] = set()
        self.last_rebuilt_pos: Pos | None = None

    def close(self) -> list[Event]:
        """openai-python's stream consumes the ``[DONE]`` itself, so a helper log never holds one: a log
        that ends once every choice has its finish reason is a whole turn; otherwise it was cut. A log
        without chunks whose rebuilt calls all got their ``.done`` ends there."""
        if self.rebuilt and not self.chunks and self.rebuilt_done >= set(self.rebuilt) and self.last_rebuilt_pos:
            return [MessageStop(self.last_rebuilt_pos)]
        if self.raw.open and self.raw.choices and self.raw._all_finished() and self.raw.last_stop_pos is not None:
            self.raw.open = False
            return [MessageStop(self.raw.last_stop_pos)]
        return self.raw.close()

    def feed(self, frame: Frame) -> list[Event]:
        value: Any = frame.value
        kind = value.get("type") if isinstance(value, dict) else None
        kind = kind if isinstance(kind, str) else None
        shape = SHAPES.get(kind) if kind is not None else None
        if shape is None:
            return self._helper(frame, value, kind)
        found = self.fields.check(frame.pos, value, shape, kind or "")
        out = self._helper(frame, value, kind)
        return out + found if found else out

    def _helper(self, frame: Frame, value: Any, kind: str | None) -> list[Event]:
        if kind == "chunk":
            self.chunks = True
            chunk = value.get("chunk")
            if not isinstance(chunk, dict):
                return [Malformed(frame.pos, "a chunk event without a chunk object")]
            inner = Frame(frame.pos, jsontext.dumps(chunk), chunk, t=frame.t, interaction=frame.interaction)
            return self.raw._feed(inner) + self._chunk(frame.pos, chunk, value.get("snapshot"))
        if kind not in HELPER_EVENTS:
            return self.raw._feed(frame)  # whatever it is, the chat adapter says what it makes of it
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if kind in HELPER_ARGUMENTS:
            return self._arguments(frame.pos, kind, value)
        field, _, stage = kind.partition(".")
        if field not in TEXT_FIELDS or stage not in ("delta", "done"):
            return []  # logprobs: not compared
        expected = self.expected.get(kind)
        number = expected.popleft()[0] if expected else 0
        state = self.helper.get(number)
        if state is None:
            return []
        text = state.texts[field]
        snapshot = value.get("snapshot" if stage == "delta" else field, MISSING)
        name = f"{kind}.{'snapshot' if stage == 'delta' else field}"
        return self._text(frame.pos, number, field, text, snapshot, name)

    def _arguments(self, pos: Pos, kind: str, value: dict[str, Any]) -> list[Event]:
        index = value.get("index")
        key = self._key(kind, index)
        if key is None:
            return self._rebuild(pos, kind, value, index) if not self.chunks else []
        arguments = value.get("arguments")
        parsed = value.get("parsed_arguments")
        return [
            HelperSnapshot(
                pos,
                key,
                kind[len("tool_calls.function.") :],
                arguments if isinstance(arguments, str) else None,
                parsed if parsed is not None else MISSING,
                kind.endswith(".done"),
            )
        ]

    def _rebuild(self, pos: Pos, kind: str, value: dict[str, Any], index: Any) -> list[Event]:
        """A log without chunks: the call rebuilt from the helper's own events (its fragments from
        ``arguments_delta``, its input restated by ``.done``), reported once; the chunks' call ids
        and finish reasons are not in the log."""
        if type(index) is not int or index in self.rebuilt_done:
            return []
        out: list[Event] = []
        if not self.rebuilt:
            out += [
                Problem(pos, "helper-log-without-deltas", "", HelperLogWithoutDeltas(kind, "chunk")),
                MessageStart(pos, None, None),
            ]
        key = self.rebuilt.get(index)
        if key is None:
            key = self.rebuilt[index] = ("helper", index)
            name = value.get("name")
            out.append(
                ToolStart(
                    pos, key, index, "function", None, name if isinstance(name, str) else None, None, id_optional=True
                )
            )
        self.last_rebuilt_pos = pos
        arguments = value.get("arguments")
        if kind.endswith(".done"):
            self.rebuilt_done.add(index)
            out.append(BlockStop(pos, key, arguments if isinstance(arguments, str) else None))
        else:
            fragment = value.get("arguments_delta")
            if isinstance(fragment, str) and fragment:
                out.append(ArgsDelta(pos, key, fragment, ARGS))
        return out

    def _key(self, kind: str, index: Any) -> Hashable | None:
        """The call the helper means. Its events name the tool call's index, not the choice: the choice
        is the one the chunk before it made the helper send that event for (the first one waiting with
        that tool index); a log that does not follow its chunks falls back to the first choice."""
        if type(index) is not int:
            return None
        number = 0
        expected = self.expected.get(kind)
        while expected:
            choice, tool = expected.popleft()
            if tool == index:
                number = choice
                break
        state = self.raw.choices.get(number)
        return state.by_index.get(index) if state is not None else None

    def _chunk(self, pos: Pos, chunk: dict[str, Any], snapshot: Any) -> list[Event]:
        """Which helper events this chunk makes openai-python send (and for which choice), and its
        ``snapshot`` of the completion checked where this chunk changed it.

        Linear: only the choices and tool calls this chunk carries are looked at in the snapshot,
        each text by its length and its end (never the whole snapshot re-read or re-serialised)."""
        expected: dict[str, deque[tuple[int, int | None]]] = {}
        self.expected = expected
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            return []
        snapshot_choices = snapshot.get("choices") if isinstance(snapshot, dict) else None
        out: list[Event] = []
        for choice in choices:
            if not isinstance(choice, dict):
                continue
            number = choice.get("index")
            number = number if type(number) is int else 0
            state = self.helper.get(number)
            if state is None:
                state = self.helper[number] = _HelperChoice()
            delta = choice.get("delta")
            delta = delta if isinstance(delta, dict) else {}
            message = _snapshot_message(snapshot_choices, number)
            for field in TEXT_FIELDS:
                payload = delta.get(field)
                if not isinstance(payload, str):
                    continue
                text = state.texts[field]
                text.length += len(payload)
                text.tail = payload or text.tail
                text.seen = True
                expected.setdefault(f"{field}.delta", deque()).append((number, None))
                if message is not None and field in message:
                    name = f"chunk.snapshot.choices[{number}].message.{field}"
                    out.extend(self._text(pos, number, field, text, message[field], name))
            calls = delta.get("tool_calls")
            calls = (
                [c for c in calls if isinstance(c, dict) and type(c.get("index")) is int]
                if isinstance(calls, list)
                else []
            )
            for call in calls:
                expected.setdefault(HELPER_ARGUMENTS[0], deque()).append((number, call["index"]))
                out.extend(self._call_snapshot(pos, number, call["index"], message))
            if choice.get("finish_reason"):
                state.finished = True
            # ChoiceEventState.get_done_events: the texts and the current call are done at the
            # choice's finish_reason, and when a fragment for another tool index arrives.
            if state.finished:
                self._done(expected, number, state, None)
            for call in calls:
                if state.current != call["index"]:
                    self._done(expected, number, state, None)
                    if state.current is not None:
                        self._done(expected, number, state, state.current)
                state.current = call["index"]
        return out

    def _done(
        self, expected: dict[str, deque[tuple[int, int | None]]], number: int, state: _HelperChoice, tool: int | None
    ) -> None:
        if tool is None:
            for field, text in state.texts.items():
                # content.done needs text; refusal.done only a refusal field (the helper's ``is not None``)
                if not text.done and (text.length if field == "content" else text.seen):
                    text.done = True
                    expected.setdefault(f"{field}.done", deque()).append((number, None))
            if state.current is not None and state.current not in state.done:
                state.done.add(state.current)
                expected.setdefault(HELPER_ARGUMENTS[1], deque()).append((number, state.current))
        elif tool not in state.done:
            state.done.add(tool)
            expected.setdefault(HELPER_ARGUMENTS[1], deque()).append((number, tool))

    def _call_snapshot(self, pos: Pos, number: int, index: int, message: dict[str, Any] | None) -> list[Event]:
        """The chunk snapshot's arguments of the tool call this chunk's fragment went to."""
        calls = message.get("tool_calls") if message is not None else None
        call = calls[index] if isinstance(calls, list) and 0 <= index < len(calls) else None
        function = call.get("function") if isinstance(call, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        state = self.raw.choices.get(number)
        key = state.by_index.get(index) if state is not None else None
        if key is None or not isinstance(arguments, str):
            return []
        return [
            HelperSnapshot(
                pos, key, f"chunk.snapshot.choices[{number}].message.tool_calls[{index}].function.arguments", arguments
            )
        ]

    @staticmethod
    def _text(pos: Pos, number: int, field: str, text: _Text, snapshot: Any, name: str) -> list[Event]:
        if snapshot is MISSING or snapshot is None:
            return []
        if not isinstance(snapshot, str):
            return [Malformed(pos, f"the helper's {name} is a {type(snapshot).__name__}, not text")]
        return [HelperSnapshot(pos, (number, TEXT_FIELDS[field]), name, snapshot, length=text.length, tail=text.tail)]


def _snapshot_message(choices: Any, number: int) -> dict[str, Any] | None:
    """The snapshot's message of choice ``number`` (the helper keeps its choices at their index)."""
    if not isinstance(choices, list) or not 0 <= number < len(choices):
        return None
    choice = choices[number]
    if not isinstance(choice, dict) or choice.get("index") != number:
        return None
    message = choice.get("message")
    return message if isinstance(message, dict) else None
