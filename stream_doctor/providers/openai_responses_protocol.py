"""The OpenAI Responses stream's protocol as data: its event types, its output item kinds and the
documented fields of each event, item and content part (``openai_responses`` translates with them;
SD006 reports any other field through ``fields.FieldCheck``).

Sources: ../shared/reference/wire-formats.md §3, openai-python 3.54's
``src/openai/types/responses/response_stream_event.py`` and the members named below.
"""

from __future__ import annotations

from typing import NamedTuple

from stream_doctor.providers.fields import Shape
from stream_doctor.providers.sniffing import Words
from stream_doctor.values.events import FinishCategory

#: The event that carries an argument fragment (the hot path's).
ARGUMENTS_DELTA = "response.function_call_arguments.delta"


class CallKind(NamedTuple):
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
CALLS: dict[str, CallKind] = {
    "function_call": CallKind(None, False, False, True, "arguments"),
    "custom_tool_call": CallKind(None, False, True, True, "input"),
    "mcp_call": CallKind(None, True, False, True, "arguments"),
    "mcp_approval_request": CallKind(None, True, False, False, "arguments"),
    "apply_patch_call": CallKind("apply_patch", False, True, True, "operation.diff"),
    "code_interpreter_call": CallKind("code_interpreter", True, True, True, "code"),
    "program": CallKind("program", True, True, False, "code"),
    "shell_call": CallKind("shell", False, False, False, "action"),
    "local_shell_call": CallKind("local_shell", False, False, False, "action"),
    "computer_call": CallKind("computer_use", False, False, False, "action"),
    "tool_search_call": CallKind("tool_search", True, False, False, "arguments"),
    "web_search_call": CallKind("web_search", True, False, False, "action"),
    "file_search_call": CallKind("file_search", True, False, False, "queries"),
    "image_generation_call": CallKind("image_generation", True, False, False, ""),
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

#: Every event type begins ``response.`` but the stream's ``error`` and ``keepalive``.
WORDS = Words(names=frozenset({"error", "keepalive"}), prefixes=("response.",))

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
