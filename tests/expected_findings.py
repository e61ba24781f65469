"""What each fixture must be diagnosed with: the rule codes it deserves, no more, no fewer.

This table is the reviewable statement of behaviour; the golden snapshots hold the wording.
"""

from __future__ import annotations

EXPECTED: dict[str, set[str]] = {
    # clean streams
    "anthropic/one_call.sse": set(),
    "anthropic/parallel_calls.sse": set(),
    "anthropic/thinking_text_tool.sse": set(),
    "anthropic/server_tool_use.sse": set(),
    "anthropic/no_argument_tool.sse": set(),
    "anthropic/input_in_start_event.jsonl": set(),
    "anthropic/parallel_calls_executed.jsonl": set(),
    "anthropic/sse_crlf_comments_multiline.sse": set(),
    "anthropic/pause_turn.sse": {"SD305"},
    "anthropic/pause_turn_pending_server_tool.sse": {"SD305"},
    # what the application did wrong
    "anthropic/empty_input_bug.jsonl": {"SD102"},
    "anthropic/premature_execution_partial_buffer.jsonl": {"SD101"},
    "anthropic/executed_twice.jsonl": {"SD105"},
    "anthropic/executed_unknown_id.jsonl": {"SD104"},
    "anthropic/executed_input_differs.jsonl": {"SD103"},
    "anthropic/executed_abandoned_call.jsonl": {"SD101", "SD301"},
    "anthropic/executed_server_tool.jsonl": {"SD106"},
    # what the stream did wrong
    "anthropic/abandoned_at_max_tokens.sse": {"SD301"},
    "anthropic/stream_cut_mid_arguments.sse": {"SD301", "SD303"},
    "anthropic/unparseable_fine_grained_arguments.sse": {"SD201"},
    "anthropic/unparseable_trailing_data.sse": {"SD201", "SD202"},
    "anthropic/fine_grained_swallowed_field.jsonl": set(),  # parses; the schema check (issue 4) will see it
    "anthropic/overloaded_error_mid_stream.sse": {"SD301", "SD302"},
    "anthropic/duplicate_tool_ids.sse": {"SD405"},
    "anthropic/delta_for_unstarted_block.sse": {"SD401", "SD304"},
    "anthropic/skipped_block_index.sse": {"SD404"},
    "anthropic/events_after_message_stop.sse": {"SD407", "SD402"},
    "anthropic/stop_reason_end_turn_with_tool_call.sse": {"SD304"},
    "anthropic/no_message_start.sse": {"SD408"},
    "anthropic/unknown_event_type.sse": {"SD002"},
    "anthropic/block_index_reused.sse": {"SD403"},
    "anthropic/spliced_retry_stream.sse": {"SD409", "SD301"},
    "anthropic/tool_use_without_id.sse": {"SD406"},
    "anthropic/argument_text_as_text_delta.sse": {"SD410", "SD201"},
    "anthropic/stop_reason_set_twice.sse": {"SD411", "SD304"},
    # what the capture file itself shows
    "anthropic/relay_keepalive_not_json.sse": {"SD001"},
    "anthropic/capture_cut_inside_event.sse": {"SD001", "SD003", "SD301", "SD303"},
    "anthropic/not_utf8_text_delta.sse": {"SD001", "SD004"},
    "anthropic/event_name_mismatch.sse": {"SD005"},
}
