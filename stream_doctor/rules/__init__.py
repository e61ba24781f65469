"""Rules stage: pure checks over the accumulated stream, one module per rule, codes stable forever.

Codes are grouped by hundreds (see ``base.FAMILIES``). A retired code stays reserved: never reuse one.
"""

from __future__ import annotations

from stream_doctor.rules.arguments import sd201_unparseable_arguments, sd202_parsed_before_complete
from stream_doctor.rules.base import Rule
from stream_doctor.rules.capture import (
    sd001_malformed_frame,
    sd002_unknown_event,
    sd003_capture_cut,
    sd004_not_utf8,
    sd005_sse_framing,
    sd006_unknown_fields,
)
from stream_doctor.rules.correlation import (
    sd501_calls_merged_on_one_index,
    sd502_uncorrelated_fragment,
    sd503_call_id_repeated,
    sd504_tool_name_repeated,
    sd505_tool_name_unstable,
    sd506_call_id_unstable,
    sd507_call_index_irregular,
    sd508_end_of_stream_missing,
    sd509_duplicate_call,
    sd510_final_arguments_differ,
    sd511_summary_differs,
    sd512_summary_duplicates_call,
    sd513_call_only_in_summary,
    sd514_summary_of_incomplete_call,
    sd515_item_id_rotated,
    sd516_sequence_number_irregular,
    sd517_parallel_wrapper_call,
    sd518_arguments_only_in_completion,
    sd519_tool_input_error,
    sd520_same_name_calls_without_id,
    sd521_missing_terminal_function_call,
    sd522_partial_args_string_split,
    sd523_partial_args_unplaceable,
    sd524_thought_signature_placement,
    sd525_stop_with_function_calls,
    sd526_tool_call_rejected,
    sd527_prompt_blocked,
    sd528_eventstream_frame_corrupt,
    sd529_empty_start_union,
    sd530_finish_reason_missing,
    sd531_call_after_finish_reason,
)
from stream_doctor.rules.execution import (
    sd101_premature_execution,
    sd102_empty_input_execution,
    sd103_executed_input_differs,
    sd104_executed_unknown_call,
    sd105_executed_twice,
    sd106_executed_server_tool,
)
from stream_doctor.rules.pairing import (
    sd601_result_without_call,
    sd602_call_without_result,
    sd603_duplicate_result,
    sd604_result_misplaced,
    sd605_item_id_as_call_id,
    sd606_call_id_rewritten,
    sd607_call_id_reused,
    sd608_echoed_empty_input,
    sd609_echoed_input_differs,
)
from stream_doctor.rules.schema import (
    sd701_missing_required_argument,
    sd702_argument_wrong_type,
    sd703_argument_violates_schema,
    sd704_unknown_tool,
    sd705_partial_parse_hazard,
    sd706_invalid_tool_schema,
)
from stream_doctor.rules.structure import (
    sd401_event_for_unknown_block,
    sd402_event_after_block_stop,
    sd403_block_index_reused,
    sd404_block_index_gap,
    sd405_duplicate_call_id,
    sd406_call_without_id_or_name,
    sd407_event_after_message_stop,
    sd408_missing_message_start,
    sd409_message_restarted,
    sd410_delta_type_mismatch,
    sd411_stop_reason_changed,
)
from stream_doctor.rules.termination import (
    sd301_abandoned_call,
    sd302_stream_error_event,
    sd303_stream_cut,
    sd304_stop_reason_mismatch,
    sd305_turn_paused,
    sd306_pending_after_turn_end,
)

RULES: tuple[Rule, ...] = tuple(
    module.check
    for module in (
        sd001_malformed_frame,
        sd002_unknown_event,
        sd003_capture_cut,
        sd004_not_utf8,
        sd005_sse_framing,
        sd006_unknown_fields,
        sd101_premature_execution,
        sd102_empty_input_execution,
        sd103_executed_input_differs,
        sd104_executed_unknown_call,
        sd105_executed_twice,
        sd106_executed_server_tool,
        sd201_unparseable_arguments,
        sd202_parsed_before_complete,
        sd301_abandoned_call,
        sd302_stream_error_event,
        sd303_stream_cut,
        sd304_stop_reason_mismatch,
        sd305_turn_paused,
        sd306_pending_after_turn_end,
        sd401_event_for_unknown_block,
        sd402_event_after_block_stop,
        sd403_block_index_reused,
        sd404_block_index_gap,
        sd405_duplicate_call_id,
        sd406_call_without_id_or_name,
        sd407_event_after_message_stop,
        sd408_missing_message_start,
        sd409_message_restarted,
        sd410_delta_type_mismatch,
        sd411_stop_reason_changed,
        sd501_calls_merged_on_one_index,
        sd502_uncorrelated_fragment,
        sd503_call_id_repeated,
        sd504_tool_name_repeated,
        sd505_tool_name_unstable,
        sd506_call_id_unstable,
        sd507_call_index_irregular,
        sd508_end_of_stream_missing,
        sd509_duplicate_call,
        sd510_final_arguments_differ,
        sd511_summary_differs,
        sd512_summary_duplicates_call,
        sd513_call_only_in_summary,
        sd514_summary_of_incomplete_call,
        sd515_item_id_rotated,
        sd516_sequence_number_irregular,
        sd517_parallel_wrapper_call,
        sd518_arguments_only_in_completion,
        sd519_tool_input_error,
        sd520_same_name_calls_without_id,
        sd521_missing_terminal_function_call,
        sd522_partial_args_string_split,
        sd523_partial_args_unplaceable,
        sd524_thought_signature_placement,
        sd525_stop_with_function_calls,
        sd526_tool_call_rejected,
        sd527_prompt_blocked,
        sd528_eventstream_frame_corrupt,
        sd529_empty_start_union,
        sd530_finish_reason_missing,
        sd531_call_after_finish_reason,
        sd601_result_without_call,
        sd602_call_without_result,
        sd603_duplicate_result,
        sd604_result_misplaced,
        sd605_item_id_as_call_id,
        sd606_call_id_rewritten,
        sd607_call_id_reused,
        sd608_echoed_empty_input,
        sd609_echoed_input_differs,
        sd701_missing_required_argument,
        sd702_argument_wrong_type,
        sd703_argument_violates_schema,
        sd704_unknown_tool,
        sd705_partial_parse_hazard,
        sd706_invalid_tool_schema,
    )
)

BY_CODE: dict[str, Rule] = {r.code: r for r in RULES}


def lookup(code_or_name: str) -> Rule | None:
    """A rule by code (``SD201``, any case) or by name (``unparseable-arguments``)."""
    wanted = code_or_name.strip()
    return BY_CODE.get(wanted.upper()) or next((r for r in RULES if r.name == wanted.lower()), None)
