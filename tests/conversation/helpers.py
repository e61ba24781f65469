"""Build conversations in tests: a request body per turn and the calls its stream made."""

from __future__ import annotations

from typing import Any, Sequence

from stream_doctor.capture.base import Pos
from stream_doctor.conversation.model import RequestInfo, Turn
from stream_doctor.conversation.requests import parse
from stream_doctor.values.events import ArgsDelta, BlockStop, Finish, MessageStart, MessageStop, ToolStart
from tests.helpers import Script

Call = tuple  # (id, name, [fragments]) or (id, name, [fragments], {"server_side": True, "item_id": …})


def stream(calls: Sequence[Call], message_id: str = "msg_1"):  # type: ignore[no-untyped-def]
    script = Script()
    script(MessageStart, message_id)
    for index, call in enumerate(calls):
        extra: dict[str, Any] = call[3] if len(call) > 3 else {}
        script(ToolStart, index, index, "tool_use", call[0], call[1], {}, **extra)
        for fragment in call[2]:
            script(ArgsDelta, index, fragment, "input_json_delta")
        script(BlockStop, index)
    script(Finish, "tool_use" if calls else "end_turn", "tool_calls" if calls else "end")
    script(MessageStop)
    return script.stream()


def turn(number: int, provider: str, body: Any, calls: Sequence[Call] = (), message_id: str | None = None) -> Turn:
    request = (
        RequestInfo(Pos(0, number * 100, 0), "POST", "https://example.test/v1", body) if body is not None else None
    )
    facts = parse(provider, body) if body is not None else parse(provider, None)
    return Turn(number, number, request, facts, stream(calls, message_id or f"msg_{number}"), ())
