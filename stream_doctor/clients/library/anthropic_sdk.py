"""The Anthropic Python SDK over a capture: ``client.messages.stream()`` with a mock transport.

The application's view: each ``content_block_stop`` event carries a finished ``tool_use`` block;
blocks never stopped are read from ``get_final_message()`` after the stream.
"""

from __future__ import annotations

from typing import Any

from stream_doctor.capture.base import Capture, Frame, Pos
from stream_doctor.clients.library import Original, Outcome, Seen, body_chunks, raised

#: where the application sees a call handed over, during the stream and once it ended (--client's run says it)
HANDS_AT = ("the SDK's content_block_stop event (MessageStream)", "get_final_message() (block never stopped)")


def run(capture: Capture, frames: list[Frame], original: Original | None = None) -> Outcome:
    import anthropic

    from stream_doctor.clients.library import http_module

    httpx = http_module("anthropic")

    position: list[Pos | None] = [None]

    def handler(request: Any) -> Any:
        return httpx.Response(
            200,
            headers={"content-type": "text/event-stream"},
            content=body_chunks(capture, frames, position, original),
        )

    client = anthropic.Anthropic(
        api_key="test",
        base_url="http://capture.invalid",
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )
    seen: list[Seen] = []
    stopped: set[int] = set()
    error: tuple[str, int | None, str] | None = None
    stream: Any = None
    try:
        with client.messages.stream(
            model="replay", max_tokens=1, messages=[{"role": "user", "content": "replay"}]
        ) as stream:
            for event in stream:
                block = getattr(event, "content_block", None)  # raw events (before message_start) carry none
                if event.type == "content_block_stop" and block is not None and block.type == "tool_use":
                    stopped.add(event.index)
                    seen.append(Seen(_number(position[0]), block.id, block.name, block.input))
            final = stream.get_final_message()
            for index, block in enumerate(final.content):
                if block.type == "tool_use" and index not in stopped:
                    seen.append(Seen(None, block.id, block.name, block.input))
    except Exception as exc:  # noqa: BLE001 - what the SDK raises is the result
        error = raised(exc, position)
    finally:
        client.close()
    if error is None:
        return Outcome(tuple(seen), None, None)
    return Outcome(tuple(seen), *error)


def _number(pos: Pos | None) -> int | None:
    return pos.number if pos is not None else None
