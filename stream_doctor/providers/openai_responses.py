"""OpenAI Responses streaming (``POST /v1/responses`` with ``"stream": true``).

Wire format: ../shared/reference/wire-formats.md §3 and openai-python
``src/openai/types/responses/response_stream_event.py``. Every output item (function call,
message, reasoning, a hosted tool's call …) has an ``output_index``, its position in
``response.output``. Calls are keyed by it: it stays put when ``item_id`` does not (GitHub
Copilot's endpoint sends a new ``item_id`` on every event, vercel/ai #18548), and some events
carry no ``item_id`` at all (``response.shell_call_command.*``). The call's id is ``call_id``
(``call_…``), the one the next request's ``function_call_output`` must carry; the item id
(``fc_…``) is kept here only to notice when events disagree about it. The name is taken from
``output_item.added``: the Azure capture's ``function_call_arguments.done`` has none, although
the current SDK type lists one.

A call is complete at its own ``….done`` event (``function_call_arguments.done``,
``custom_tool_call_input.done``, ``mcp_call_arguments.done``, ``apply_patch_call_operation_diff.done``,
``code_interpreter_call_code.done``), which restates the whole input; items with no such event
(shell, computer, tool search, web search …, and any call whose ``.done`` never came, as LM Studio
streams them) complete at ``response.output_item.done``. That event, and ``response.completed``'s
``output``, otherwise restate the call and are checked against it (``CallSummary``).
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Hashable, Sequence

import orjson

from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.capture.problem_facts import (
    ArgumentsWithoutDeltas,
    EventNameMismatch,
    ItemIdRotated,
    OutputItem,
    SequenceIrregular,
)
from stream_doctor.capture.runs import FRAGMENT, FrameRun, RunForm
from stream_doctor.providers.base import Batching
from stream_doctor.providers.fields import FieldCheck
from stream_doctor.providers.openai_responses_protocol import (
    ARGUMENT_DELTAS,
    ARGUMENT_DONES,
    ARGUMENTS_DELTA,
    BLOCKS,
    CALLS,
    CONTENT_DELTAS,
    DELTA_FIELDS,
    EVENT,
    EVENT_SHAPES,
    INCOMPLETE_CATEGORIES,
    KNOWN_TYPES,
    QUIET,
    TERMINAL,
    WORDS,
    CallKind,
)
from stream_doctor.providers.sniffing import score
from stream_doctor.values.events import (
    MISSING,
    ArgsDelta,
    BlockDelta,
    BlockStart,
    BlockStop,
    CallSummary,
    Event,
    Finish,
    HelperSnapshot,
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

name = "openai-responses"
title = "OpenAI Responses"
#: ``output_index`` is the item's position in ``response.output``: a gap means an item was lost.
#: The stream ends at one of the three terminal events (wire-formats §3.4); an ``error`` event may
#: be followed by ``response.failed``, but openai-python raises on it and closes the response.
protocol = ProtocolFacts(
    EventWords(
        message_start="response.created",
        call_start="response.output_item.added",
        fragment="response.function_call_arguments.delta",
        call_end="response.function_call_arguments.done",
        stream_end="response.completed",
        stop_reason="status",
    ),
    positional_indices=True,
    stream_end=StreamEnd(events=frozenset({"response.completed", "response.incomplete", "response.failed", "error"})),
)


_STRONG = frozenset(
    {
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.output_text.delta",
    }
)


#: The function-call arguments delta as the API sends it (``capture/runs.py``): its ``event:`` line,
#: then type, sequence_number, item_id, output_index, delta and (unless the request turned it off)
#: obfuscation, in this order, no whitespace. A run of them for one item, differing only in the
#: fragment, the sequence number and the obfuscation padding, is read without a Frame per event;
#: its sequence numbers are checked to follow on (``translate``).
run_form = RunForm(
    "responses function_call_arguments.delta",
    rb"event: response\.function_call_arguments\.delta\n"
    rb'data: \{"type":"response\.function_call_arguments\.delta","sequence_number":(?P<sequence>0|[1-9][0-9]{0,15}),'
    rb'"item_id":"[^"\\\x00-\x1f]++","output_index":(?:0|[1-9][0-9]{0,8}),"delta":"(?P<fragment>'
    + FRAGMENT
    + rb')"(?:,"obfuscation":"(?P<obfuscation>[^"\\\x00-\x1f]*+)")?\}\n\n',
    {"sequence": rb"0|[1-9][0-9]{0,15}", "obfuscation": rb'[^"\\\x00-\x1f]*+'},
)
_sequence = itemgetter("sequence")


def sniff(frames: Sequence[Frame]) -> int:
    """Responses events are objects whose ``type`` is ``response.…`` (or ``error``/``keepalive`` with a sequence number)."""
    return score(frames, WORDS, _weigh)


def _weigh(frame: Frame) -> int:
    value = frame.value
    kind = value.get("type")
    if not isinstance(kind, str):
        return 0
    if kind in _STRONG:
        return 2
    if kind.startswith("response."):
        return 1
    return 1 if kind in ("error", "keepalive") and ("sequence_number" in value or "code" in value) else 0


def translator() -> ResponsesTranslator:
    return ResponsesTranslator()


class _Item:
    """One output item of the response being read: what the protocol needs to place its events."""

    __slots__ = ("item_type", "item_id", "kind", "call_id", "name", "deltas", "done", "rotated")

    def __init__(self, item_type: str, item_id: str | None, kind: CallKind | None) -> None:
        self.item_type = item_type
        self.item_id = item_id
        self.kind = kind
        self.call_id: str | None = None
        self.name: str | None = None
        self.deltas = 0
        self.done = False  # its completion was emitted (a `.done` event, or output_item.done)
        self.rotated = False  # an event named it by another item id (reported once)


class ResponsesTranslator(Batching):
    __slots__ = (
        "counts", "items", "item_ids", "next_sequence", "sequence_missing", "client_calls", "error_seen", "fields",
        "delta_size",
    )  # fmt: skip

    fragment_event = ARGUMENTS_DELTA
    delta_type = ARGUMENTS_DELTA

    def __init__(self) -> None:
        self.fields = FieldCheck()
        self.delta_size = DELTA_FIELDS  # the key count of the last arguments delta whose fields were all documented
        self.counts: dict[str, int] = {"response.function_call_arguments.delta": 0}
        self.items: dict[int, _Item] = {}
        self.item_ids: dict[str, int] = {}  # item id -> output_index, for events without output_index
        self.next_sequence: int | None = None
        self.sequence_missing = False
        self.client_calls = 0
        self.error_seen = False

    def close(self) -> list[Event]:
        return []

    def fast_fragment(self, frame: Frame) -> tuple[int, str] | list[Event] | None:
        """An arguments delta of an item already open, with the expected sequence number and only
        documented fields (see ``base.Batching``). openai-python's ``responses.stream()`` adds the
        text so far as ``snapshot``: such a delta is its ArgsDelta and the snapshot, never batched."""
        value = frame.value
        try:
            if value["type"] == ARGUMENTS_DELTA:
                index = value["output_index"]
                item = self.items[index]
                if (
                    value["sequence_number"] == self.next_sequence
                    and value["item_id"] == item.item_id
                    and (frame.event is None or frame.event == ARGUMENTS_DELTA)
                    and (len(value) == self.delta_size or self._documented(value))
                ):
                    fragment = value["delta"]
                    if type(fragment) is str:
                        self.next_sequence += 1  # type: ignore[operator]
                        item.deltas += 1
                        if "snapshot" in value:
                            pos = frame.pos
                            return [
                                ArgsDelta(pos, index, fragment, ARGUMENTS_DELTA),
                                _snapshot(pos, index, value["snapshot"]),
                            ]
                        return index, fragment
        except (KeyError, TypeError):
            pass
        return None

    def run_fragments(self, run: FrameRun, key: Hashable) -> list[str] | None:
        """A run's deltas differ from its head only in fragment, sequence number and padding: each
        takes the hot path too (same item, same output index) if their sequence numbers follow on."""
        expected, count = self.next_sequence, len(run.fragments)
        if expected is None:
            return None
        # the numbers read in one parse: the form's group holds only decimal digits without a leading
        # zero, which JSON reads as ``int`` does, and ``int`` on each match cost twice as much
        numbers = orjson.loads(b"[" + b",".join(map(_sequence, run.matches)) + b"]")
        if numbers != list(range(expected, expected + count)):
            return None
        self.next_sequence = expected + count
        self.items[key].deltas += count  # type: ignore[index]
        return run.fragments

    def _documented(self, value: dict[str, Any]) -> bool:
        """Whether an arguments delta whose key count differs from the last one seen (obfuscation
        padding, a snapshot) has only documented fields; then that count is the one to expect. A delta
        with another field takes the checked path, which reports it (SD006)."""
        if EVENT_SHAPES.get(value["type"], EVENT).fields.issuperset(value):
            self.delta_size = len(value)
            return True
        return False

    def _feed(self, frame: Frame) -> list[Event]:
        pos = frame.pos
        value = frame.value
        if value is NOT_JSON:
            if frame.data.strip() == b"[DONE]":  # gateways (LiteLLM) add it; the API never sends it
                self.counts["[DONE]"] = self.counts.get("[DONE]", 0) + 1
                return [KeepAlive(pos, "[DONE]")]
            return [Malformed(pos, frame.error or "not JSON")]
        if not isinstance(value, dict):
            return [Malformed(pos, f"expected a JSON object, got {type(value).__name__}")]
        kind = value.get("type")
        if not isinstance(kind, str):
            return [Malformed(pos, "event object without a string 'type'")]
        self.counts[kind] = self.counts.get(kind, 0) + 1
        out: list[Event] = []
        if kind == "response.created":
            self._new_response()
        self._sequence(pos, kind, value, out)
        if kind in ARGUMENT_DELTAS:
            self._argument_delta(pos, kind, value, out)
        elif kind in CONTENT_DELTAS:
            key = self._key(pos, value, out)
            delta = value.get("delta")
            if key is not None:
                out.append(BlockDelta(pos, key, kind, len(delta) if isinstance(delta, str) else 1))
        elif kind in ARGUMENT_DONES:
            self._argument_done(pos, kind, value, out)
        elif kind == "response.output_item.added":
            self._item_added(pos, value, out)
        elif kind == "response.output_item.done":
            self._item_done(pos, value, out)
        elif kind in QUIET:
            if isinstance(value.get("output_index"), int):
                self._key(pos, value, out)  # only to notice an item id that changed
        elif kind == "response.created":
            response = value.get("response")
            response = response if isinstance(response, dict) else {}
            out.append(MessageStart(pos, _str(response.get("id")), _str(response.get("model"))))
        elif kind in TERMINAL:
            self._terminal(pos, kind, value, out)
        elif kind == "error":
            # Two shapes: the SDK's ``{type, code, message, param}`` and the nested
            # ``{type, error: {type, code, message}}`` of the captured openai-error.1 stream.
            nested = value.get("error")
            error: dict[str, Any] = nested if isinstance(nested, dict) else value
            error_type = _str(error.get("type")) if error is not value else None
            self.error_seen = True
            out.append(StreamError(pos, error_type or _str(error.get("code")), _str(error.get("message"))))
        elif kind == "keepalive":
            # Undocumented but sent on long requests, with a sequence number of its own
            # (openai/openai-node #1964, handled as a no-op by PR #1965).
            out.append(KeepAlive(pos, "keepalive"))
        else:
            out.append(Unknown(pos, kind))
        if kind in KNOWN_TYPES:
            out.extend(self.fields.check(pos, value, EVENT_SHAPES.get(kind, EVENT), ""))
        if frame.event is not None and frame.event != kind:
            out.append(Problem(pos, "event-name-mismatch", "", EventNameMismatch(frame.event, kind)))
        return out

    # -- the response ------------------------------------------------------------------------

    def _new_response(self) -> None:
        self.items = {}
        self.item_ids = {}
        self.next_sequence = None
        self.sequence_missing = False
        self.client_calls = 0
        self.error_seen = False

    def _sequence(self, pos: Pos, kind: str, value: dict[str, Any], out: list[Event]) -> None:
        """``sequence_number`` counts the response's events from 0 without gaps (openai-python)."""
        number = value.get("sequence_number")
        expected = self.next_sequence
        if type(number) is not int:
            if expected is not None and not self.sequence_missing:
                self.sequence_missing = True
                out.append(Problem(pos, "sequence-missing", "", SequenceIrregular("missing", kind, None, expected - 1)))
            return
        if expected is None or number == expected:
            self.next_sequence = number + 1
        elif number > expected:
            out.append(Problem(pos, "sequence-gap", "", SequenceIrregular("gap", kind, number, expected - 1)))
            self.next_sequence = number + 1
        else:
            out.append(Problem(pos, "sequence-disorder", "", SequenceIrregular("disorder", kind, number, expected - 1)))

    def _terminal(self, pos: Pos, kind: str, value: dict[str, Any], out: list[Event]) -> None:
        response = value.get("response")
        response = response if isinstance(response, dict) else {}
        if kind == "response.failed":
            error = response.get("error")
            if isinstance(error, dict) and not self.error_seen:
                out.append(StreamError(pos, _str(error.get("code")), _str(error.get("message"))))
            out.append(Finish(pos, "failed", "error"))
            out.append(MessageStop(pos))
            return
        output = response.get("output")
        if isinstance(output, list):  # some relays send response.completed with no output at all
            for index, item in enumerate(output):
                if isinstance(item, dict) and isinstance(item.get("type"), str) and item["type"] in CALLS:
                    out.append(self._summary(pos, index, item))
        if kind == "response.completed":
            # The Responses API has no "tool calls" stop reason: a completed response whose output
            # holds a client call waits for its result (the AI SDK maps it so too:
            # map-openai-responses-finish-reason.ts, `hasFunctionCall`).
            out.append(Finish(pos, "completed", "tool_calls" if self.client_calls else "end"))
        else:
            details = response.get("incomplete_details")
            reason = _str(details.get("reason")) if isinstance(details, dict) else None
            out.append(Finish(pos, reason or "incomplete", INCOMPLETE_CATEGORIES.get(reason or "", "other")))
        out.append(MessageStop(pos))

    # -- output items ------------------------------------------------------------------------

    def _item_added(self, pos: Pos, value: dict[str, Any], out: list[Event]) -> None:
        index = value.get("output_index")
        item = value.get("item")
        if type(index) is not int:
            out.append(Malformed(pos, "response.output_item.added without an integer 'output_index'"))
            return
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            out.append(Malformed(pos, "response.output_item.added without a typed 'item'"))
            return
        item_type: str = item["type"]
        item_id = _str(item.get("id"))
        kind = CALLS.get(item_type)
        state = _Item(item_type, item_id, kind)
        self.items[index] = state
        if item_id is not None:
            self.item_ids[item_id] = index
        if kind is None:
            out.append(BlockStart(pos, index, index, item_type, _str(item.get("call_id"))))
            if item_type not in BLOCKS:
                out.append(Unknown(pos, f"response.output_item.added/{item_type}"))
            return
        server_side = _server_side(item_type, kind, item)
        if not server_side:
            self.client_calls += 1
        state.call_id = _call_id(item_type, item)
        state.name = _str(item.get("name")) or kind.tool
        text, start = _item_input(kind, item)
        if text is not None:  # a string field: "" is the placeholder; anything else is input given whole
            start = text if kind.text or not text else _loads(text)
        caller = item.get("caller")
        caller_type = caller.get("type") if isinstance(caller, dict) else None
        out.append(
            ToolStart(
                pos,
                index,
                index,
                item_type,
                state.call_id,
                state.name,
                None if start is MISSING else start,
                server_side,
                _str(caller_type) if caller_type != "direct" else None,
                input_format="text" if kind.text else "json",
                item_id=item_id,
            )
        )

    def _item_done(self, pos: Pos, value: dict[str, Any], out: list[Event]) -> None:
        index = value.get("output_index")
        item = value.get("item")
        if type(index) is not int or not isinstance(item, dict):
            out.append(Malformed(pos, "response.output_item.done without an integer 'output_index' and an 'item'"))
            return
        state = self.items.get(index)
        if state is not None:
            self._check_item_id(pos, index, state, _str(item.get("id")), "response.output_item.done", out)
        kind = CALLS.get(_str(item.get("type")) or "")
        if kind is None:
            out.append(BlockStop(pos, index))
            return
        if state is None or state.done or item.get("status") == "incomplete":
            # Already completed by its `.done` event (or never started, or cut): a restatement.
            out.append(self._summary(pos, index, item))
            return
        # No `.done` event came (items without one, LM Studio's function calls): this is the completion.
        state.done = True
        text, whole = _item_input(kind, item)
        if text is not None:
            out.append(BlockStop(pos, index, final_arguments=text))
            self._no_deltas(pos, state, text, "response.output_item.done", out)
        else:
            out.append(BlockStop(pos, index, final_input=whole))
        out.append(self._summary(pos, index, item))  # its id and name, checked against the start

    def _summary(self, pos: Pos, index: int, item: dict[str, Any]) -> CallSummary:
        item_type: str = item["type"]
        kind = CALLS[item_type]
        text, whole = _item_input(kind, item)
        call_id = _call_id(item_type, item)
        name = _str(item.get("name")) or kind.tool
        if text is None:
            return CallSummary(pos, index, call_id, name, input=whole)
        if kind.text:
            return CallSummary(pos, index, call_id, name, input=text)
        return CallSummary(pos, index, call_id, name, arguments=text)

    # -- argument fragments ------------------------------------------------------------------

    def _argument_delta(self, pos: Pos, kind: str, value: dict[str, Any], out: list[Event]) -> None:
        fragment = value.get("delta")
        if not isinstance(fragment, str):
            out.append(Malformed(pos, f"{kind} whose 'delta' is not a string"))
            return
        key = self._key(pos, value, out)
        state = self.items.get(key) if type(key) is int else None
        if state is not None:
            state.deltas += 1
        out.append(ArgsDelta(pos, key, fragment, kind))
        if "snapshot" in value:
            out.append(_snapshot(pos, key, value["snapshot"]))

    def _argument_done(self, pos: Pos, kind: str, value: dict[str, Any], out: list[Event]) -> None:
        text = value.get(ARGUMENT_DONES[kind])
        key = self._key(pos, value, out)
        state = self.items.get(key) if type(key) is int else None
        if not isinstance(text, str):
            text = "" if text is None and kind == "response.code_interpreter_call_code.done" else None
        if text is None:
            out.append(Malformed(pos, f"{kind} without its '{ARGUMENT_DONES[kind]}' text"))
            out.append(BlockStop(pos, key))
            return
        if state is not None:
            state.done = True
            self._no_deltas(pos, state, text, kind, out)
        out.append(BlockStop(pos, key, final_arguments=text))

    def _no_deltas(self, pos: Pos, state: _Item, text: str, where: str, out: list[Event]) -> None:
        """A streaming call whose whole input came in its completion event (lidge-jun/opencodex PR #4652)."""
        if state.kind is None or not state.kind.streams or state.deltas or not text:
            return
        facts = ArgumentsWithoutDeltas(_output_item(state), len(text), where)
        out.append(Problem(pos, "arguments-without-deltas", "", facts))

    def _key(self, pos: Pos, value: dict[str, Any], out: list[Event]) -> int | None:
        """The item an event is about: its ``output_index``, else the index its ``item_id`` was added at."""
        index = value.get("output_index")
        item_id = value.get("item_id")
        if type(index) is int:
            state = self.items.get(index)
            if state is not None and isinstance(item_id, str):
                self._check_item_id(pos, index, state, item_id, _str(value.get("type")) or "event", out)
            return index
        if isinstance(item_id, str):
            return self.item_ids.get(item_id)
        return None

    @staticmethod
    def _check_item_id(pos: Pos, index: int, state: _Item, item_id: str | None, kind: str, out: list[Event]) -> None:
        if item_id is None or item_id == state.item_id or state.rotated or state.item_id is None:
            return
        state.rotated = True
        facts = ItemIdRotated(_output_item(state), index, state.item_id, kind, item_id)
        out.append(Problem(pos, "item-id-rotated", "", facts))


def _item_input(kind: CallKind, item: dict[str, Any]) -> tuple[str | None, Any]:
    """The call's input as the item holds it: ``(text, MISSING)`` for a string field, ``(None, value)`` otherwise."""
    field = kind.field
    if not field:
        return None, MISSING
    if field == "operation.diff":
        operation = item.get("operation")
        diff = operation.get("diff") if isinstance(operation, dict) else None
        return (diff if isinstance(diff, str) else ""), MISSING
    if field == "action" and "action" not in item and "actions" in item:  # computer_call batches actions
        field = "actions"
    held = item.get(field, MISSING)
    if isinstance(held, str):
        return held, MISSING
    if held is None and kind.text:
        return "", MISSING
    if field == "queries" and held is not MISSING:
        return None, {"queries": held}
    return None, held


def _server_side(item_type: str, kind: CallKind, item: dict[str, Any]) -> bool:
    if item_type == "tool_search_call":
        return item.get("execution") != "client"  # "execution": "client" | "server" (captured)
    if item_type == "shell_call":
        # The shell tool runs on the client; with a container environment OpenAI runs it. How a
        # container-run item says so is unconfirmed (no capture): an `environment` of type container….
        environment = item.get("environment")
        return isinstance(environment, dict) and str(environment.get("type", "")).startswith("container")
    return kind.server_side


def _call_id(item_type: str, item: dict[str, Any]) -> str | None:
    """The id the next request answers with: ``call_id``; hosted items and MCP items have only ``id``."""
    call_id = _str(item.get("call_id"))
    if call_id or item_type in ("function_call", "custom_tool_call"):
        return call_id
    return _str(item.get("id"))


def _snapshot(pos: Pos, key: Any, snapshot: Any) -> HelperSnapshot:
    """The ``snapshot`` openai-python's ``responses.stream()`` helper adds to each arguments delta
    (``lib/streaming/responses/_responses.py``: the arguments so far), for the accumulator to check."""
    text = snapshot if isinstance(snapshot, str) else None
    return HelperSnapshot(pos, key, "response.function_call_arguments.delta.snapshot", text)


def _loads(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _output_item(state: _Item) -> OutputItem:
    return OutputItem(state.item_type, state.kind is not None, state.name, state.call_id)
