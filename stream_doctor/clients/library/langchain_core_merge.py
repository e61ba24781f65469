"""LangChain over a capture: the provider SDK's raw stream (mock transport), each event turned into
an ``AIMessageChunk`` with ``tool_call_chunks`` as the provider package's converter does, and the
chunks added up by langchain-core itself; the calls are the sum's ``tool_calls`` (run) and
``invalid_tool_calls`` (not run).

The converters follow langchain-openai 1.7.4 (``_convert_chunk_to_generation_chunk``: the first
choice of each chunk; ``_convert_delta_to_message_chunk`` L571-584: a chunk per ``tool_calls[]``
entry, all of them lost to a caught ``KeyError`` when one has no ``index``) and
langchain-anthropic 1.7.10 (``_make_message_chunk_from_anthropic_event`` L2347-2470: a
``tool_use`` start gives name, id and its input as JSON text when not empty; an
``input_json_delta`` gives ``args`` when the latest block started is a ``tool_use``). Those two
packages are not installed by the test extra (their pins conflict with the rest); what runs for
real is the SDK's stream and langchain-core's merging and parsing.
"""

from __future__ import annotations

import json
from typing import Any

from stream_doctor.capture.base import Capture, Frame, Pos
from stream_doctor.clients.library import Outcome, Seen, http_module, sse_chunks
from stream_doctor.events import MISSING


def run(capture: Capture, frames: list[Frame]) -> Outcome:
    from langchain_core.messages import AIMessageChunk

    from stream_doctor.clients.library.pydantic_ai_models import _provider

    anthropic = _provider(capture) == "anthropic"
    position: list[Pos | None] = [None]
    total: Any = AIMessageChunk(content="")
    error: tuple[str, int | None] | None = None
    try:
        for chunks in (_anthropic_chunks if anthropic else _openai_chunks)(capture, frames, position):
            if chunks:
                total = total + AIMessageChunk(content="", tool_call_chunks=chunks)
    except Exception as exc:  # noqa: BLE001 - what the stack raises is the result
        error = (type(exc).__name__, position[0].number if position[0] is not None else None)
    if error is not None:
        return Outcome((), error[0], error[1])
    seen = [Seen(None, call.get("id"), call["name"], call["args"]) for call in total.tool_calls]
    seen += [Seen(None, call.get("id"), call.get("name") or "", MISSING) for call in total.invalid_tool_calls]
    return Outcome(tuple(seen), None, None)


def _client(sdk: str, capture: Capture, frames: list[Frame], position: list[Pos | None]) -> Any:
    httpx = http_module(sdk)

    def handler(request: Any) -> Any:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=sse_chunks(capture, frames, position)
        )

    http_client = httpx.Client(transport=httpx.MockTransport(handler))
    if sdk == "anthropic":
        import anthropic

        return anthropic.Anthropic(
            api_key="test", base_url="http://capture.invalid", max_retries=0, http_client=http_client
        )
    import openai

    return openai.OpenAI(api_key="test", base_url="http://capture.invalid/v1", max_retries=0, http_client=http_client)


def _openai_chunks(capture: Capture, frames: list[Frame], position: list[Pos | None]) -> Any:
    client = _client("openai", capture, frames, position)
    stream = client.chat.completions.create(
        model="replay", messages=[{"role": "user", "content": "replay"}], stream=True
    )
    for chunk in stream:
        data = chunk if isinstance(chunk, dict) else chunk.model_dump()
        choices = data.get("choices") or []
        if not choices or choices[0].get("delta") is None:
            yield []
            continue
        raw = choices[0]["delta"].get("tool_calls")
        chunks = []
        if raw:
            try:
                chunks = [
                    {
                        "name": rtc["function"].get("name"),
                        "args": rtc["function"].get("arguments"),
                        "id": rtc.get("id"),
                        "index": rtc["index"],
                        "type": "tool_call_chunk",
                    }
                    for rtc in raw
                ]
            except KeyError:
                chunks = []
        yield chunks


def _anthropic_chunks(capture: Capture, frames: list[Frame], position: list[Pos | None]) -> Any:
    client = _client("anthropic", capture, frames, position)
    stream = client.messages.create(
        model="replay", max_tokens=1, messages=[{"role": "user", "content": "replay"}], stream=True
    )
    block_start: Any = None
    for event in stream:
        chunks = []
        if event.type == "content_block_start" and event.content_block is not None:
            kind = event.content_block.type
            if any(word in kind for word in ("tool_result", "tool_use", "document", "redacted_thinking")) or kind in (
                "text",
                "thinking",
            ):
                block_start = event
            if kind == "tool_use":
                parsed = getattr(event.content_block, "input", None)
                args = json.dumps(parsed) if parsed and isinstance(parsed, dict) else ""
                chunks = [
                    {
                        "name": event.content_block.name,
                        "args": args,
                        "id": event.content_block.id,
                        "index": event.index,
                        "type": "tool_call_chunk",
                    }
                ]
        elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
            started = getattr(block_start, "content_block", None)
            if started is not None and getattr(started, "type", None) == "tool_use":
                chunks = [
                    {
                        "name": None,
                        "args": event.delta.partial_json,
                        "id": None,
                        "index": event.index,
                        "type": "tool_call_chunk",
                    }
                ]
        yield chunks
