"""A follow-up that waits for its conversation to be free asks again which conversation it continues: two
agents that send back the same call id each stay in their own conversation, whichever order the proxy
sees their exchanges in (``Conversations.join``, driven step by step with a listener the test controls)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from stream_doctor.capture.base import Pos
from stream_doctor.record.conversations import Conversation, Conversations

FIRST: dict[str, Any] = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "Go."}]}


def _follow_up(streamed: dict[str, Any]) -> dict[str, Any]:
    call = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": streamed}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
    history = [*FIRST["messages"], {"role": "assistant", "content": [call]}, {"role": "user", "content": [result]}]
    return FIRST | {"messages": history}


class _Turns:
    """A listener whose latest assistant turn is what the test says (every first answer calls ``toolu_1``)."""

    def __init__(self, path: str, provider: str | None) -> None:
        self.calls = frozenset({"toolu_1"})

    def record(self, record: dict[str, Any], line: bytes, pos: Pos) -> None:
        pass

    def exchange_ended(self) -> None:
        pass

    def assistant_turn(self) -> tuple[frozenset[str], frozenset[str]]:
        return self.calls, frozenset()

    def close(self) -> None:
        pass


def _answered_with_text(conversation: Conversation) -> None:
    """The exchange under way is recorded: its answer was text, no call."""
    listener = conversation.listener
    assert listener is not None and isinstance(listener.inner, _Turns)
    listener.inner.calls = frozenset()


def test_two_agents_sending_back_the_same_call_id_keep_their_own_conversations(tmp_path: Path) -> None:
    async def main() -> tuple[Conversation, Conversation, Conversation, Conversation]:
        conversations = Conversations(str(tmp_path), "test", listen=_Turns)
        first = [await conversations.join("anthropic", FIRST, "/v1/messages", 0.0) for _ in range(2)]
        for conversation in first:
            conversations.release(conversation)
        a = await conversations.join("anthropic", _follow_up({}), "/v1/messages", 0.0)
        # b sends back the same id while a's exchange is still being recorded: it waits for that conversation
        b_joins = asyncio.ensure_future(conversations.join("anthropic", _follow_up({"x": 1}), "/v1/messages", 0.0))
        await asyncio.sleep(0.05)
        assert not b_joins.done()
        _answered_with_text(a)
        conversations.release(a)
        b = await b_joins
        return first[0], first[1], a, b

    one, two, a, b = asyncio.run(main())
    assert one is not two
    assert {a.number, b.number} == {one.number, two.number}
    assert a.exchanges == b.exchanges == 2


def test_a_follow_up_that_waited_for_its_own_turn_to_be_recorded_joins_it(tmp_path: Path) -> None:
    """The near miss: the conversation it waited for still ends with the call it sends back."""

    async def main() -> tuple[Conversations, Conversation, Conversation]:
        conversations = Conversations(str(tmp_path), "test", listen=_Turns)
        first = await conversations.join("anthropic", FIRST, "/v1/messages", 0.0)
        follow_up = asyncio.ensure_future(conversations.join("anthropic", _follow_up({}), "/v1/messages", 0.0))
        await asyncio.sleep(0.05)
        assert not follow_up.done()
        conversations.release(first)
        return conversations, first, await follow_up

    conversations, first, follow_up = asyncio.run(main())
    assert follow_up is first and first.exchanges == 2 and conversations.numbers == 1
