"""The grouping reads each request for what is new (``record.echo.Reading``) and sees what a whole read sees:
the same call ids, response id, digests and roles, for a history extended, repeated, edited, truncated, or
holding a value orjson writes another way (``1.0`` after ``1``: equal as values, another message as text)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_doctor.record.conversations import Conversations
from stream_doctor.record.echo import Echo, Reading, echo_of, history_text


def _turn(number: int) -> list[dict[str, Any]]:
    call = f"toolu_{number}"
    return [
        {"role": "assistant", "content": [{"type": "tool_use", "id": call, "name": "f", "input": {"n": number}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": "ok"}]},
    ]


#: what the next request does to the history: extends it, sends it again, edits a message, cuts it
STEPS = st.lists(
    st.one_of(
        st.just(("extend", 0)),
        st.just(("again", 0)),
        st.tuples(st.just("edit"), st.integers(0, 40)),
        st.tuples(st.just("float"), st.integers(0, 40)),
        st.tuples(st.just("cut"), st.integers(0, 40)),
    ),
    min_size=1,
    max_size=12,
)


def _session(steps: list[tuple[str, int]], key: str) -> list[dict[str, Any]]:
    history: list[Any] = [{"role": "user", "content": "Go."}]
    bodies = []
    for number, (step, at) in enumerate(steps):
        history = list(history)
        if step == "extend":
            history += _turn(number)
        elif step == "edit":
            history[at % len(history)] = {"role": "user", "content": f"edited {number}"}
        elif step == "float":  # the same value as parsed JSON, another text
            history[at % len(history)] = {"role": "user", "content": [{"type": "text", "text": "x", "n": 1.0}]}
        elif step == "cut":
            history = history[: 1 + at % len(history)]
        bodies.append({"model": "m", "stream": True, key: history})
    return bodies


def _fields(echo: Echo) -> tuple[Any, ...]:
    return echo.call_ids, echo.previous_response_id, echo.history, echo.roles


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(STEPS, st.sampled_from([("anthropic", "messages"), ("openai", "messages"), ("openai-responses", "input")]))
def test_a_request_read_for_what_is_new_echoes_what_a_whole_read_does(
    steps: list[tuple[str, int]], family: tuple[str, str]
) -> None:
    provider, key = family
    reading = Reading()
    for body in _session(steps, key):
        assert _fields(reading.read(provider, body, history_text(body))) == _fields(echo_of(provider, body))


def test_each_request_of_a_long_session_digests_only_its_new_messages(monkeypatch: Any, tmp_path: Path) -> None:
    """300 requests, each the one before and two new messages: 2 digests each after the first (a whole read
    makes one per message: 90,000); the near miss, a history edited at its start, is digested whole."""
    import hashlib

    from stream_doctor.record import echo

    made = 0
    blake2b = hashlib.blake2b

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal made
        made += 1
        return blake2b(*args, **kwargs)

    monkeypatch.setattr(echo.hashlib, "blake2b", counted)
    conversations = Conversations(str(tmp_path), "test")
    bodies = _session([("extend", 0)] * 300, "messages")

    async def main() -> None:
        for body in bodies:
            conversations.release(await conversations.join("anthropic", body, "/v1/messages", 0.0))

    asyncio.run(main())
    assert made == 1 + 2 * 300
    assert conversations.numbers == 1
    made = 0
    edited = {**bodies[-1], "messages": [{"role": "user", "content": "Other."}, *bodies[-1]["messages"][1:]]}
    asyncio.run(conversations.join("anthropic", edited, "/v1/messages", 0.0))
    assert made == len(edited["messages"])
