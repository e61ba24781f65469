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
from typing import Any, Hashable, NamedTuple, Sequence

import orjson

from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.capture.runs import FRAGMENT, FrameRun, RunForm
from stream_doctor.events import (
    MISSING,
    ArgsDelta,
    BlockDelta,
    BlockStart,
    BlockStop,
    CallSummary,
    Event,
    Finish,
    FinishCategory,
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
from stream_doctor.problems import (
    ArgumentsWithoutDeltas,
    EventNameMismatch,
    ItemIdRotated,
    OutputItem,
    SequenceIrregular,
)
from stream_doctor.protocol import EventWords, ProtocolFacts, StreamEnd
from stream_doctor.providers.base import Batching
from stream_doctor.providers.fields import FieldCheck, Shape
from stream_doctor.providers.sniffing import score

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


class _Kind(NamedTuple):
    """How one output item type behaves as a call."""

    tool: str | None  # the name a call gets when the item has no ``name`` (hosted tools)
    server_side: bool  # the provider runs it (tool_search_call and shell_call decide per item)
    text: bool  # free-text input (a custom tool's input, a diff, code), never JSON-parsed
    streams: bool  # its input normally arrives in delta events; none at all is a quirk (SD518)
    field: str  # where the item holds the input: arguments, input, code, action, …


#: Output items that are tool calls. ``mcp_approval_request`` is a server-run MCP call waiting for
#: the client's ``mcp_approval_response`` (its id is the ``approval_request_id``): the client answers
#: it but never runs it. ``program`` is the code-mode program whose code calls client functions
#: (``function_call.caller``), run by the server. The custom
#: tool call id prefix ``ctc_`` and the streamed ``custom_tool_call_input.delta`` events are settled
#: from the live capture vercel/ai ``packages/openai/src/responses/__fixtures__/openai-custom-text-tool.1.chunks.txt``.
CALLS: dict[str, _Kind] = {
    "function_call": _Kind(None, False, False, True, "arguments"),
    "custom_tool_call": _Kind(None, False, True, True, "input"),
    "mcp_call": _Kind(None, True, False, True, "arguments"),
    "mcp_approval_request": _Kind(None, True, False, False, "arguments"),
    "apply_patch_call": _Kind("apply_patch", False, True, True, "operation.diff"),
    "code_interpreter_call": _Kind("code_interpreter", True, True, True, "code"),
    "program": _Kind("program", True, True, False, "code"),
    "shell_call": _Kind("shell", False, False, False, "action"),
    "local_shell_call": _Kind("local_shell", False, False, False, "action"),
    "computer_call": _Kind("computer_use", False, False, False, "action"),
    "tool_search_call": _Kind("tool_search", True, False, False, "arguments"),
    "web_search_call": _Kind("web_search", True, False, False, "action"),
    "file_search_call": _Kind("file_search", True, False, False, "queries"),
    "image_generation_call": _Kind("image_generation", True, False, False, ""),
}

#: Output items that are content, or a hosted tool's listing or result, not a call.
BLOCKS = frozenset(
    {
        "message",
        "reasoning",
        "mcp_list_tools",
        "tool_search_output",
        "compaction",
        "shell_call_output",
        "local_shell_call_output",
        "apply_patch_call_output",
        "function_call_output",
        "custom_tool_call_output",
        "computer_call_output",
    }
)

#: Argument fragments: event type -> the field of its ``….done`` event that restates the input.
ARGUMENT_DELTAS = {
    "response.function_call_arguments.delta": "response.function_call_arguments.done",
    "response.custom_tool_call_input.delta": "response.custom_tool_call_input.done",
    "response.mcp_call_arguments.delta": "response.mcp_call_arguments.done",
    "response.apply_patch_call_operation_diff.delta": "response.apply_patch_call_operation_diff.done",
    "response.code_interpreter_call_code.delta": "response.code_interpreter_call_code.done",
}
ARGUMENT_DONES = {
    "response.function_call_arguments.done": "arguments",
    "response.custom_tool_call_input.done": "input",
    "response.mcp_call_arguments.done": "arguments",
    "response.apply_patch_call_operation_diff.done": "diff",
    "response.code_interpreter_call_code.done": "code",
}

#: Text-like deltas of message and reasoning items (only their size is kept).
CONTENT_DELTAS = frozenset(
    {
        "response.output_text.delta",
        "response.refusal.delta",
        "response.reasoning_text.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning.delta",  # older SDKs
        "response.reasoning_summary.delta",
    }
)

#: Known events that change nothing a replay tracks: content part bookkeeping, ``.done`` events of
#: text, hosted tools' progress, shell command streaming (the command is restated whole in the
#: item's ``action`` at ``output_item.done``), audio, and the lifecycle events before the output.
QUIET = frozenset(
    {
        "response.queued",
        "response.in_progress",
        "response.content_part.added",
        "response.content_part.done",
        "response.reasoning_part.added",
        "response.reasoning_part.done",
        "response.output_text.done",
        "response.output_text.annotation.added",  # the name the AI SDK and older SDKs use
        "response.output_text_annotation.added",
        "response.refusal.done",
        "response.reasoning_text.done",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
        "response.reasoning_summary_text.done",
        "response.reasoning.done",
        "response.reasoning_summary.done",
        "response.audio.delta",
        "response.audio.done",
        "response.audio.transcript.delta",
        "response.audio.transcript.done",
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.web_search_call.completed",
        "response.file_search_call.in_progress",
        "response.file_search_call.searching",
        "response.file_search_call.completed",
        "response.code_interpreter_call.in_progress",
        "response.code_interpreter_call.interpreting",
        "response.code_interpreter_call.completed",
        "response.image_generation_call.in_progress",
        "response.image_generation_call.generating",
        "response.image_generation_call.partial_image",
        "response.image_generation_call.completed",
        "response.mcp_call.in_progress",
        "response.mcp_call.completed",
        "response.mcp_call.failed",
        "response.mcp_list_tools.in_progress",
        "response.mcp_list_tools.completed",
        "response.mcp_list_tools.failed",
        "response.shell_call_command.added",
        "response.shell_call_command.delta",
        "response.shell_call_command.done",
        "response.shell_call_output_content.delta",
        "response.shell_call_output_content.done",
        "response.compaction.compacting",
    }
)

TERMINAL = ("response.completed", "response.incomplete", "response.failed")

KNOWN_TYPES = (
    frozenset(
        {
            "response.created",
            "response.output_item.added",
            "response.output_item.done",
            "error",
            "keepalive",
            *TERMINAL,
        }
    )
    | QUIET
    | CONTENT_DELTAS
    | frozenset(ARGUMENT_DELTAS)
    | frozenset(ARGUMENT_DONES)
)

#: The documented fields of an event type not in ``EVENT_SHAPES`` (SD006 lists any other), the union: every field a
#: member of openai-python 3.54's ``ResponseStreamEvent`` defines, with ``diff`` (the
#: ``apply_patch_call_operation_diff.done`` restatement the adapter reads, vercel/ai's
#: openai-apply-patch-tool capture), ``name`` (``function_call_arguments.done`` in the API reference),
#: ``snapshot`` (added by openai-python's ``responses.stream()`` helper) and ``error`` (the nested
#: error event). The ``response`` object is checked against ``Response``, with ``store`` (in the response
#: body of Fireworks' OpenAI-compatible ``POST /v1/responses`` reference), ``billing`` (async-openai's ``Response``) and the Open Responses
#: fields that LM Studio and OpenAI send, ``frequency_penalty`` and ``presence_penalty`` (OpenRouter's
#: ``OpenResponsesResult`` reference) and Azure's ``content_filters`` (its content filter results,
#: ``[{blocked, source_type, content_filter_results}]``, as Azure's Chat-Completions-to-Responses
#: migration guide shows them); items and parts are unions of many types and are not checked.
#: Paths name the field, not the event (one union for all): ``response.store``, not per event type.
EVENT_FIELDS = frozenset(
    "type sequence_number item_id output_index content_index summary_index annotation_index delta text"
    " arguments input code command command_index item part response annotation logprobs obfuscation"
    " refusal output status message param partial_image_b64 partial_image_index size quality background"
    " output_format diff name snapshot error".split()
)
EVENT = Shape(
    EVENT_FIELDS,
    {
        "response": Shape(
            "id object created_at completed_at status background conversation error incomplete_details"
            " instructions max_output_tokens max_tool_calls metadata model moderation output"
            " parallel_tool_calls previous_response_id prompt prompt_cache_key prompt_cache_options"
            " prompt_cache_retention prompt_cache_diagnostics reasoning safety_identifier service_tier"
            " temperature text tool_choice tool_usage tools top_logprobs top_p truncation usage user image"
            " access_programs input_transformations store billing frequency_penalty presence_penalty output_text"
            " content_filters"
        )
    },
)
#: The fields of each event type, where the docs give them: openai-python 3.54's member of
#: ``ResponseStreamEvent`` for that type (besides ``type`` and ``sequence_number``), with
#: ``obfuscation`` on every ``.delta`` event (the API reference's ``stream_options.include_obfuscation``
#: pads streaming delta events), ``snapshot`` on the text and arguments deltas and ``parsed`` on
#: ``output_text.done`` (the ``responses.stream()`` helper's events, ``lib/streaming/responses/_events.py``),
#: ``name`` on ``function_call_arguments.done`` (the API reference) and ``error`` on ``error`` (the nested
#: error event). A type not listed here (``keepalive``, the apply-patch diff events, older reasoning
#: names) is checked against the union ``EVENT``.
_TYPE_FIELDS: dict[str, str] = {
    "error": "code message param",
    "response.audio.delta": "delta",
    "response.audio.done": "",
    "response.audio.transcript.delta": "delta",
    "response.audio.transcript.done": "",
    "response.code_interpreter_call.completed": "item_id output_index",
    "response.code_interpreter_call.in_progress": "item_id output_index",
    "response.code_interpreter_call.interpreting": "item_id output_index",
    "response.code_interpreter_call_code.delta": "delta item_id output_index",
    "response.code_interpreter_call_code.done": "code item_id output_index",
    "response.compaction.compacting": "item_id output_index",
    "response.completed": "response",
    "response.content_part.added": "content_index item_id output_index part",
    "response.content_part.done": "content_index item_id output_index part",
    "response.created": "response",
    "response.custom_tool_call_input.delta": "delta item_id output_index",
    "response.custom_tool_call_input.done": "input item_id output_index",
    "response.failed": "response",
    "response.file_search_call.completed": "item_id output_index",
    "response.file_search_call.in_progress": "item_id output_index",
    "response.file_search_call.searching": "item_id output_index",
    "response.function_call_arguments.delta": "delta item_id output_index",
    "response.function_call_arguments.done": "arguments item_id output_index",
    "response.image_generation_call.completed": "item_id output_index",
    "response.image_generation_call.generating": "item_id output_index",
    "response.image_generation_call.in_progress": "item_id output_index",
    "response.image_generation_call.partial_image": "background item_id output_format output_index partial_image_b64 partial_image_index quality size",
    "response.in_progress": "response",
    "response.incomplete": "response",
    "response.mcp_call.completed": "item_id output_index",
    "response.mcp_call.failed": "item_id output_index",
    "response.mcp_call.in_progress": "item_id output_index",
    "response.mcp_call_arguments.delta": "delta item_id output_index",
    "response.mcp_call_arguments.done": "arguments item_id output_index",
    "response.mcp_list_tools.completed": "item_id output_index",
    "response.mcp_list_tools.failed": "item_id output_index",
    "response.mcp_list_tools.in_progress": "item_id output_index",
    "response.output_item.added": "item output_index",
    "response.output_item.done": "item output_index",
    "response.output_text.annotation.added": "annotation annotation_index content_index item_id output_index",
    "response.output_text.delta": "content_index delta item_id logprobs output_index",
    "response.output_text.done": "content_index item_id logprobs output_index text",
    "response.queued": "response",
    "response.reasoning_summary_part.added": "item_id output_index part summary_index",
    "response.reasoning_summary_part.done": "item_id output_index part status summary_index",
    "response.reasoning_summary_text.delta": "delta item_id output_index summary_index",
    "response.reasoning_summary_text.done": "item_id output_index summary_index text",
    "response.reasoning_text.delta": "content_index delta item_id output_index",
    "response.reasoning_text.done": "content_index item_id output_index text",
    "response.refusal.delta": "content_index delta item_id output_index",
    "response.refusal.done": "content_index item_id output_index refusal",
    "response.shell_call_command.added": "command command_index output_index",
    "response.shell_call_command.delta": "command_index delta obfuscation output_index",
    "response.shell_call_command.done": "command command_index output_index",
    "response.shell_call_output_content.delta": "command_index delta item_id output_index",
    "response.shell_call_output_content.done": "command_index item_id output output_index",
    "response.web_search_call.completed": "item_id output_index",
    "response.web_search_call.in_progress": "item_id output_index",
    "response.web_search_call.searching": "item_id output_index",
}
_EXTRA_FIELDS: dict[str, str] = {
    "response.output_text.delta": "snapshot",
    "response.function_call_arguments.delta": "snapshot",
    "response.output_text.done": "parsed",
    "response.function_call_arguments.done": "name",
    "error": "error",
}
#: The fields of each output item and content part type (``item`` of ``output_item.added``/``.done``,
#: ``part`` of ``content_part.added``/``.done``, each of ``response.output``): openai-python 3.54's
#: members of ``ResponseOutputItem`` and ``ResponseItem`` (the item as listed later, with ``status`` and
#: ``created_by``) and of ``ResponseContentPartAddedEvent.Part``, by their wire names.
#: A type not listed is not checked (an unknown item type is SD002's business).
ITEM_FIELDS: dict[str, str] = {
    "message": "content id phase role status",
    "file_search_call": "id queries results status",
    "function_call": "arguments async call_id caller created_by id name namespace status",
    "function_call_output": "call_id caller created_by id name namespace output status",
    "web_search_call": "action id status",
    "computer_call": "action actions call_id id pending_safety_checks status",
    "computer_call_output": "acknowledged_safety_checks call_id created_by id output status",
    "reasoning": "content encrypted_content id status summary",
    "program": "call_id code fingerprint id",
    "program_output": "call_id id result status",
    "tool_search_call": "arguments call_id created_by execution id status",
    "tool_search_output": "call_id created_by execution id status tools",
    "additional_tools": "id role tools",
    "compaction": "created_by encrypted_content id",
    "image_generation_call": "action background error id output_format quality result revised_prompt size status svg_usage",
    "code_interpreter_call": "code container_id id outputs status",
    "local_shell_call": "action call_id id status",
    "local_shell_call_output": "id output status",
    "shell_call": "action call_id caller created_by environment id status",
    "shell_call_output": "call_id caller created_by id max_output_length output status",
    "apply_patch_call": "call_id caller created_by id operation status",
    "apply_patch_call_output": "call_id caller created_by id output status",
    "mcp_call": "approval_request_id arguments error id name output server_label status",
    "mcp_list_tools": "error id server_label tools",
    "mcp_approval_request": "arguments id name server_label",
    "mcp_approval_response": "approval_request_id approve id reason",
    "custom_tool_call": "async call_id caller created_by id input name namespace status",
    "custom_tool_call_output": "call_id caller created_by id output status",
    "configuration_update": "id reasoning text",
}
PART_FIELDS: dict[str, str] = {
    "output_text": "annotations logprobs text",
    "refusal": "refusal",
    "reasoning_text": "text",
}
ITEM = Shape("type id", variants=ITEM_FIELDS)
PART = Shape("type", variants=PART_FIELDS)
_NESTED: dict[str, dict[str, Shape]] = {
    "response.output_item.added": {"item": ITEM},
    "response.output_item.done": {"item": ITEM},
    "response.content_part.added": {"part": PART},
    "response.content_part.done": {"part": PART},
}
EVENT_SHAPES: dict[str, Shape] = {
    kind: Shape(
        "type sequence_number "
        + fields
        + (" obfuscation" if kind.endswith(".delta") else "")
        + " "
        + _EXTRA_FIELDS.get(kind, ""),
        _NESTED.get(kind, EVENT.nested),
    )
    for kind, fields in _TYPE_FIELDS.items()
}
#: The fields the hot path reads of an arguments delta: a delta with no other field needs no check.
DELTA_FIELDS = 5

#: ``incomplete_details.reason`` -> neutral category (openai-python ``response.py`` IncompleteDetails).
INCOMPLETE_CATEGORIES: dict[str, FinishCategory] = {"max_output_tokens": "length", "content_filter": "filter"}

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
    return score(frames, _weigh)


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

    def __init__(self, item_type: str, item_id: str | None, kind: _Kind | None) -> None:
        self.item_type = item_type
        self.item_id = item_id
        self.kind = kind
        self.call_id: str | None = None
        self.name: str | None = None
        self.deltas = 0
        self.done = False  # its completion was emitted (a `.done` event, or output_item.done)
        self.rotated = False  # an event named it by another item id (reported once)


#: The event that carries an argument fragment (the hot path's).
ARGUMENTS_DELTA = "response.function_call_arguments.delta"


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
        if expected is None or list(map(int, map(_sequence, run.matches))) != list(range(expected, expected + count)):
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


def _item_input(kind: _Kind, item: dict[str, Any]) -> tuple[str | None, Any]:
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


def _server_side(item_type: str, kind: _Kind, item: dict[str, Any]) -> bool:
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
