"""Rules stage: pure checks over the accumulated stream, one module per rule, codes stable forever.

Codes are grouped by hundreds (see ``base.FAMILIES``). A retired code stays reserved: never reuse one.
This is the one rule catalog: the ``rules`` listing, ``explain``, SARIF's rules table and rule
selection read it, also for the rules ``check`` raises itself (scope ``"check"``: SD000, SD900).

The registry names each rule's module, by scope, in code order; a scope's modules are imported the
first time its rules are asked for (``rules_of``), so a replay with no request history and no
``--client`` never imports the conversation and client rules. ``RULES`` (every rule) and
``BY_CODE`` import them all, on first use.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING, Any

from stream_doctor.rules.base import Rule, Scope

if TYPE_CHECKING:
    RULES: tuple[Rule, ...]
    BY_CODE: dict[str, Rule]

#: Each scope's rule modules (below ``stream_doctor.rules``), in code order: the stream rules run
#: over each turn's accumulated stream, the conversation rules across the turns (requests, tool
#: results, schemas), the client rules over each ``--client`` review; the check rules are raised by
#: ``stream-doctor check`` (and ``scan``) about a capture as a file, never by the replay engine.
STREAM_MODULES: tuple[str, ...] = (
    "capture.sd001_malformed_frame",
    "capture.sd002_unknown_event",
    "capture.sd003_capture_cut",
    "capture.sd004_not_utf8",
    "capture.sd005_sse_framing",
    "capture.sd006_unknown_fields",
    "capture.sd007_metadata_disagrees",
    "capture.sd008_body_undecodable",
    "capture.sd009_helper_log_without_deltas",
    "execution.sd101_premature_execution",
    "execution.sd102_empty_input_execution",
    "execution.sd103_executed_input_differs",
    "execution.sd104_executed_unknown_call",
    "execution.sd105_executed_twice",
    "execution.sd106_executed_server_tool",
    "arguments.sd201_unparseable_arguments",
    "arguments.sd202_parsed_before_complete",
    "termination.sd301_abandoned_call",
    "termination.sd302_stream_error_event",
    "termination.sd303_stream_cut",
    "termination.sd304_stop_reason_mismatch",
    "termination.sd305_turn_paused",
    "termination.sd306_pending_after_turn_end",
    "structure.sd401_event_for_unknown_block",
    "structure.sd402_event_after_block_stop",
    "structure.sd403_block_index_reused",
    "structure.sd404_block_index_gap",
    "structure.sd405_duplicate_call_id",
    "structure.sd406_call_without_id_or_name",
    "structure.sd407_event_after_message_stop",
    "structure.sd408_missing_message_start",
    "structure.sd409_message_restarted",
    "structure.sd410_delta_type_mismatch",
    "structure.sd411_stop_reason_changed",
    "correlation.sd501_calls_merged_on_one_index",
    "correlation.sd502_uncorrelated_fragment",
    "correlation.sd503_call_id_repeated",
    "correlation.sd504_tool_name_repeated",
    "correlation.sd505_tool_name_unstable",
    "correlation.sd506_call_id_unstable",
    "correlation.sd507_call_index_irregular",
    "correlation.sd508_end_of_stream_missing",
    "correlation.sd509_duplicate_call",
    "correlation.sd510_final_arguments_differ",
    "correlation.sd511_summary_differs",
    "correlation.sd512_summary_duplicates_call",
    "correlation.sd513_call_only_in_summary",
    "correlation.sd514_summary_of_incomplete_call",
    "correlation.sd515_item_id_rotated",
    "correlation.sd516_sequence_number_irregular",
    "correlation.sd517_parallel_wrapper_call",
    "correlation.sd518_arguments_only_in_completion",
    "correlation.sd519_tool_input_error",
    "correlation.sd520_same_name_calls_without_id",
    "correlation.sd521_missing_terminal_function_call",
    "correlation.sd522_partial_args_string_split",
    "correlation.sd523_partial_args_unplaceable",
    "correlation.sd524_thought_signature_placement",
    "correlation.sd525_stop_with_function_calls",
    "correlation.sd526_tool_call_rejected",
    "correlation.sd527_prompt_blocked",
    "correlation.sd528_eventstream_frame_corrupt",
    "correlation.sd529_empty_start_union",
    "correlation.sd530_finish_reason_missing",
    "correlation.sd531_call_after_finish_reason",
    "correlation.sd532_helper_snapshot_differs",
)

CONVERSATION_MODULES: tuple[str, ...] = (
    "pairing.sd601_result_without_call",
    "pairing.sd602_call_without_result",
    "pairing.sd603_duplicate_result",
    "pairing.sd604_result_misplaced",
    "pairing.sd605_item_id_as_call_id",
    "pairing.sd606_call_id_rewritten",
    "pairing.sd607_call_id_reused",
    "pairing.sd608_echoed_empty_input",
    "pairing.sd609_echoed_input_differs",
    "pairing.sd610_thought_signature_not_sent_back",
    "schema.sd701_missing_required_argument",
    "schema.sd702_argument_wrong_type",
    "schema.sd703_argument_violates_schema",
    "schema.sd704_unknown_tool",
    "schema.sd705_partial_parse_hazard",
    "schema.sd706_invalid_tool_schema",
)

CLIENT_MODULES: tuple[str, ...] = (
    "clients.sd801_client_input_differs",
    "clients.sd802_client_runs_call_early",
    "clients.sd803_client_runs_abandoned_call",
    "clients.sd804_client_drops_call",
    "clients.sd805_client_raises",
    "clients.sd806_client_name_or_id_differs",
    "clients.sd807_client_merges_calls",
    "clients.sd808_client_runs_call_twice",
    "clients.sd809_client_model_differs",
)

CHECK_MODULES: tuple[str, ...] = (
    "capture.sd000_capture_unreadable",
    "check.sd900_stale_expectation",
)

MODULES: dict[Scope, tuple[str, ...]] = {
    "stream": STREAM_MODULES,
    "conversation": CONVERSATION_MODULES,
    "client": CLIENT_MODULES,
    "check": CHECK_MODULES,
}


def codes() -> tuple[str, ...]:
    """Every rule's code, read from its module's name (``sd201_…`` is SD201), importing none."""
    return tuple(sorted(name.rsplit(".", 1)[1][:5].upper() for scope in MODULES.values() for name in scope))


@cache
def rules_of(scope: Scope) -> tuple[Rule, ...]:
    """The rules of one scope, in code order (their modules imported now, once)."""
    found: list[Rule] = []
    for name in MODULES[scope]:
        rule: Rule = importlib.import_module(f"stream_doctor.rules.{name}").check
        if rule.scope != scope:
            raise AssertionError(f"{rule.code} is a {rule.scope} rule registered as a {scope} rule")
        found.append(rule)
    return tuple(found)


def __getattr__(name: str) -> Any:
    if name == "RULES":
        every = tuple(sorted((rule for scope in MODULES for rule in rules_of(scope)), key=lambda r: r.code))
        globals()["RULES"] = every
        return every
    if name == "BY_CODE":
        by_code = {r.code: r for r in __getattr__("RULES")}
        globals()["BY_CODE"] = by_code
        return by_code
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def lookup(code_or_name: str) -> Rule | None:
    """A rule by code (``SD201``, any case) or by name (``unparseable-arguments``)."""
    rules: tuple[Rule, ...] = __getattr__("RULES")
    by_code: dict[str, Rule] = __getattr__("BY_CODE")
    wanted = code_or_name.strip()
    return by_code.get(wanted.upper()) or next((r for r in rules if r.name == wanted.lower()), None)
