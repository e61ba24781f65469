"""LiteLLM over a capture: ``litellm.completion(model="openai/…", stream=True)`` on the official
OpenAI SDK client with a mock transport (LiteLLM's ``CustomStreamWrapper`` reads the SDK's chunks),
then ``litellm.stream_chunk_builder`` over every chunk, as an agent on LiteLLM rebuilds the
response it runs tools from; the calls are that response's ``tool_calls``.

Pinned by the test extra at 1.83.0, the newest LiteLLM that installs beside the rest: 1.83.1 to
1.106.10 require ``openai<3`` (the test extra pins openai 3.54.0), 1.108.0 and later require
``certifi>=2026.10.19``, a release PyPI does not have. The import reads LiteLLM's bundled model
cost map (``LITELLM_LOCAL_MODEL_COST_MAP``) instead of fetching it.
"""

from __future__ import annotations

import os
from typing import Any

from stream_doctor.capture.base import Capture, Frame, Pos
from stream_doctor.clients.library import Original, Outcome, Seen, body_chunks, http_module, raised

# LiteLLM fetches its model cost map from the network at import unless told to read its bundled copy
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


#: where the application sees a call handed over, during the stream and once it ended (--client's run says it)
HANDS_AT = ("a chunk", "stream_chunk_builder's response")


def run(capture: Capture, frames: list[Frame], original: Original | None = None) -> Outcome:
    import litellm
    import openai

    httpx = http_module("openai")
    position: list[Pos | None] = [None]

    def handler(request: Any) -> Any:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=body_chunks(capture, frames, position, original)
        )

    client = openai.OpenAI(
        api_key="test",
        base_url="http://capture.invalid/v1",
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )
    messages = [{"role": "user", "content": "replay"}]
    chunks: list[Any] = []
    try:
        stream = litellm.completion(
            model="openai/replay",
            messages=messages,
            stream=True,
            client=client,
            api_key="test",
            api_base="http://capture.invalid/v1",
            max_retries=0,
        )
        for chunk in stream:
            chunks.append(chunk)
        response = litellm.stream_chunk_builder(chunks, messages=messages)
    except Exception as exc:  # noqa: BLE001 - what the library raises is the result
        return Outcome((), *raised(exc, position))
    finally:
        client.close()
    seen = []
    for choice in getattr(response, "choices", None) or []:
        for call in getattr(choice.message, "tool_calls", None) or []:
            seen.append(Seen(None, call.id, call.function.name, call.function.arguments))
        legacy = getattr(choice.message, "function_call", None)
        if legacy is not None:
            seen.append(Seen(None, None, legacy.name, legacy.arguments))
    return Outcome(tuple(seen), None, None)
