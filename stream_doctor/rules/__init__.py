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
)
from stream_doctor.rules.execution import (
    sd101_premature_execution,
    sd102_empty_input_execution,
    sd103_executed_input_differs,
    sd104_executed_unknown_call,
    sd105_executed_twice,
    sd106_executed_server_tool,
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
)

RULES: tuple[Rule, ...] = tuple(
    module.check
    for module in (
        sd001_malformed_frame,
        sd002_unknown_event,
        sd003_capture_cut,
        sd004_not_utf8,
        sd005_sse_framing,
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
)

BY_CODE: dict[str, Rule] = {r.code: r for r in RULES}


def lookup(code_or_name: str) -> Rule | None:
    """A rule by code (``SD201``, any case) or by name (``unparseable-arguments``)."""
    wanted = code_or_name.strip()
    return BY_CODE.get(wanted.upper()) or next((r for r in RULES if r.name == wanted.lower()), None)
