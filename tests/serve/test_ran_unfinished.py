"""The judge's own verdict ``ran-unfinished`` on envelopes as the server writes them: a turn whose stream stops
before a call's completion, then a request that sends the call back, as a result, as the call echoed, or both
(one verdict); the near misses, a follow-up that sends nothing of it back and a call whose stream completed it,
get none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stream_doctor.api import replay
from stream_doctor.serve.judge import RAN_UNFINISHED, _ran_unfinished

CALL = "toolu_01CUT"
QUESTION = {"role": "user", "content": "Weather in Tokyo?"}
ECHO = {"role": "assistant", "content": [{"type": "tool_use", "id": CALL, "name": "get_weather", "input": {"a": 1}}]}
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": CALL, "content": "15C"}]}


def _event(data: dict[str, Any]) -> dict[str, Any]:
    return {"sd": "event", "event": data["type"], "data": data}


def _request(*messages: dict[str, Any]) -> dict[str, Any]:
    body = {"model": "claude-haiku-4-5", "max_tokens": 64, "stream": True, "messages": list(messages)}
    return {"sd": "request", "method": "POST", "url": "http://127.0.0.1:1/v1/messages", "body": body}


def _envelope(folder: Path, completed: bool, *follow_up: dict[str, Any]) -> str:
    start = {"type": "tool_use", "id": CALL, "name": "get_weather", "input": {}}
    records = [
        _request(QUESTION),
        _event(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "model": "claude-haiku-4-5",
                },
            }
        ),
        _event({"type": "content_block_start", "index": 0, "content_block": start}),
        _event(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"a": 1}'},
            }
        ),
    ]
    if completed:
        records += [
            _event({"type": "content_block_stop", "index": 0}),
            _event({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}}),
            _event({"type": "message_stop"}),
        ]
    records.append(_request(QUESTION, *follow_up))
    path = folder / "served.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("follow_up", "what"),
    [((ECHO, RESULT), "a result for"), ((ECHO,), "the call"), ((RESULT,), "a result for")],
    ids=["result-and-echo", "echo-only", "result-only"],
)
def test_a_call_sent_back_that_its_stream_never_completed(
    follow_up: tuple[dict[str, Any], ...], what: str, tmp_path: Path
) -> None:
    (verdict,) = _ran_unfinished(replay(_envelope(tmp_path, False, *follow_up)).turns)
    assert (verdict.code, verdict.call_id, verdict.severity.label) == (RAN_UNFINISHED, CALL, "error")
    assert f"turn 2's request sends back {what} {CALL}, a call turn 1's stream never completed" in verdict.message


@pytest.mark.parametrize(
    ("completed", "follow_up"), [(False, ()), (True, (ECHO, RESULT))], ids=["nothing-sent-back", "completed"]
)
def test_the_near_misses_get_no_verdict(completed: bool, follow_up: tuple[dict[str, Any], ...], tmp_path: Path) -> None:
    assert list(_ran_unfinished(replay(_envelope(tmp_path, completed, *follow_up)).turns)) == []


def test_a_call_a_retry_of_its_turn_completed_is_sent_back_whole(tmp_path: Path) -> None:
    """The cut attempt, then the application's retry of the turn answered whole (the same call id), then the
    result: the call it sends back was complete. The near miss without the retry is the verdict above."""
    cut = _envelope(tmp_path, False)
    (tmp_path / "whole").mkdir()
    whole = Path(_envelope(tmp_path / "whole", True, ECHO, RESULT))
    first = Path(cut).read_text(encoding="utf-8").splitlines()[:-1]  # the cut attempt, without its follow-up
    path = tmp_path / "retried.jsonl"
    path.write_text("\n".join([*first, *whole.read_text(encoding="utf-8").splitlines()]) + "\n", encoding="utf-8")
    assert list(_ran_unfinished(replay(str(path)).turns)) == []
