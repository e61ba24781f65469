"""pydantic-ai over a capture: its own OpenAI or Anthropic model class (``request_stream``), on the
official SDK client with a mock transport; the calls are the ``ToolCallPart``s of the finished
response, as the agent receives them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from stream_doctor.capture.base import Capture, Frame, Pos
from stream_doctor.clients.library import Original, Outcome, Seen, body_chunks, http_module, raised

#: where the application sees a call handed over, during the stream and once it ended (--client's run says it)
HANDS_AT = ("a part event", "the final ModelResponse's ToolCallPart")


def run(capture: Capture, frames: list[Frame], original: Original | None = None) -> Outcome:
    return asyncio.run(_run(capture, frames, original))


async def _run(capture: Capture, frames: list[Frame], original: Original | None) -> Outcome:
    from pydantic_ai.messages import ModelRequest, ToolCallPart, UserPromptPart
    from pydantic_ai.models import ModelRequestParameters

    anthropic = _provider(capture) == "anthropic"
    httpx = http_module("anthropic" if anthropic else "openai")
    position: list[Pos | None] = [None]

    async def body() -> Any:
        for chunk in body_chunks(capture, frames, position, original):
            yield chunk

    def handler(request: Any) -> Any:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    http_client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    model = _model(anthropic, http_client)
    seen: list[Seen] = []
    error: tuple[str, int | None, str] | None = None
    try:
        async with model.request_stream(
            [ModelRequest(parts=[UserPromptPart("replay")])], None, ModelRequestParameters()
        ) as response:
            async for _ in response:
                pass
            final = response.get()
        for part in final.parts:
            if isinstance(part, ToolCallPart):
                args = part.args if part.args not in (None, "") else {}
                # an id pydantic-ai made up for a call that had none is no id the stream gave
                call_id: Any = part.tool_call_id  # a number when the stream sent one (pydantic-ai keeps it)
                call_id = None if isinstance(call_id, str) and call_id.startswith("pyd_ai_") else call_id
                seen.append(Seen(None, call_id, part.tool_name, args))
    except Exception as exc:  # noqa: BLE001 - what the library raises is the result
        error = raised(exc, position)
    finally:
        await http_client.aclose()
    if error is None:
        return Outcome(tuple(seen), None, None)
    return Outcome(tuple(seen), *error)


def _provider(capture: Capture) -> str:
    """The capture's provider: the one its header names (``--client``'s run passes the replay's), else detected."""
    named = capture.header.get("provider") if capture.header else None
    if isinstance(named, str):
        return named
    from stream_doctor.providers import detect

    events = [f for f in capture.frames if f.kind == "event"]
    adapter, _ = detect(events, None)
    return adapter.name


def _model(anthropic: bool, http_client: Any) -> Any:
    if anthropic:
        from anthropic import AsyncAnthropic
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        sdk = AsyncAnthropic(api_key="test", base_url="http://capture.invalid", http_client=http_client, max_retries=0)
        return AnthropicModel("claude-opus-4-6", provider=AnthropicProvider(anthropic_client=sdk))
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    sdk_openai = AsyncOpenAI(
        api_key="test", base_url="http://capture.invalid/v1", http_client=http_client, max_retries=0
    )
    return OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=sdk_openai))
