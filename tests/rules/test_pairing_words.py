"""The SD6xx rules word the facts pairing records: the sentences live in the rules, not in pairing."""

from __future__ import annotations

from stream_doctor.conversation.pairing_problems import Place, ResultMisplaced
from stream_doctor.rules.pairing.sd604_result_misplaced import why
from stream_doctor.rules.pairing.sd606_call_id_rewritten import relation


def test_how_an_id_was_rewritten() -> None:
    assert relation("call_1", "gw_call_1") == "a prefix 'gw_' was added"
    assert relation("call_1", "call_1_x") == "a suffix '_x' was added"
    assert relation("call_1", "call") == "it was shortened"
    assert relation("call_1", "toolu_9") == "it was replaced"


def test_why_a_result_is_misplaced_names_the_familys_rule() -> None:
    at = Place(2, request_path="messages[3]")
    away = ResultMisplaced(at, "c1", "away-from-its-call", "openai-chat", call_path="messages[1]")
    assert why(away) == "a user or assistant message comes between it and its tool_call (messages[1])"
    assert "streamed in turn 1" in why(ResultMisplaced(at, "c1", "call-not-sent-back", "anthropic", turn=1))
    assert "previous_response_id" in why(ResultMisplaced(at, "c1", "item-not-sent-back", "responses"))
    assert "come first" in why(ResultMisplaced(at, "c1", "after-other-content", "anthropic"))
