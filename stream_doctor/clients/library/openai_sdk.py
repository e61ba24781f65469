"""The OpenAI Python SDK over a capture: ``client.chat.completions.stream()`` with a mock transport.

The application's view: each ``tool_calls.function.arguments.done`` event hands a call (its name
and argument text; the id from the snapshot entry at that index).
"""

from __future__ import annotations

from typing import Any

from stream_doctor.capture.base import Capture, Frame, Pos
from stream_doctor.clients.library import Original, Outcome, Seen, body_chunks, raised

#: where the application sees a call handed over, during the stream and once it ended (--client's run says it)
HANDS_AT = (
    "the SDK's tool_calls.function.arguments.done event (ChatCompletionStream)",
    "the final snapshot (legacy function_call)",
)


def run(capture: Capture, frames: list[Frame], original: Original | None = None) -> Outcome:
    from stream_doctor.clients.library import http_module

    httpx = http_module("openai")
    import openai

    position: list[Pos | None] = [None]

    def handler(request: Any) -> Any:
        return httpx.Response(
            200,
            headers={"content-type": "text/event-stream"},
            content=body_chunks(capture, frames, position, original),
        )

    client = openai.OpenAI(
        api_key="test",
        base_url="http://capture.invalid/v1",
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )
    seen: list[Seen] = []
    error: tuple[str, int | None, str] | None = None
    stream: Any = None
    try:
        with client.chat.completions.stream(model="replay", messages=[{"role": "user", "content": "replay"}]) as stream:
            for event in stream:
                if event.type == "tool_calls.function.arguments.done":
                    seen.append(Seen(_number(position[0]), _id(stream, event), event.name, event.arguments))
            snapshot = stream.current_completion_snapshot
            for choice in snapshot.choices:  # the legacy function_call has no done event: read at the end
                legacy = choice.message.function_call
                if legacy is not None:
                    seen.append(Seen(None, None, legacy.name, legacy.arguments))
    except Exception as exc:  # noqa: BLE001 - what the SDK raises is the result
        error = raised(exc, position)
    finally:
        client.close()
    if error is None:
        return Outcome(tuple(seen), None, None)
    return Outcome(tuple(seen), *error)


def _id(stream: Any, event: Any) -> str | None:
    """The id of the entry the done event is about (the event names no choice: match by text)."""
    found = []
    for choice in stream.current_completion_snapshot.choices:
        calls = choice.message.tool_calls or []
        if 0 <= event.index < len(calls):
            entry = calls[event.index]
            if entry.function.arguments == event.arguments and entry.function.name == event.name:
                found.append(entry.id)
    return found[0] if len(found) == 1 else None


def _number(pos: Pos | None) -> int | None:
    return pos.number if pos is not None else None
