"""LangChain over a capture: langchain-openai's ``ChatOpenAI`` or langchain-anthropic's
``ChatAnthropic`` streamed (``.stream()``) on the official SDK client with a mock transport, the
chunks added up as an agent does (``AIMessageChunk.__add__``, langchain-core), and the calls read
from the sum's ``tool_calls`` (run) and ``invalid_tool_calls`` (not run).

Everything runs for real: the SDK's SSE decoder, the provider package's converter
(``_convert_delta_to_message_chunk`` / ``_make_message_chunk_from_anthropic_event``) and
langchain-core's merging and partial-JSON parsing. Pinned by the test extra: langchain-openai
1.7.3 and langchain-anthropic 1.7.7, the newest that install beside langchain-core 1.7.2 (their next
releases need langchain-core>=1.7.5, which needs certifi>=2026.10.19, a release PyPI does not have).
Their stream paths differ from langchain-openai 1.7.4 and langchain-anthropic 1.7.10 only in
refusal and usage handling, nothing a tool call goes through.
"""

from __future__ import annotations

import warnings
from typing import Any

from stream_doctor.capture.base import Capture, Frame, Pos
from stream_doctor.clients.library import Original, Outcome, Seen, body_chunks, http_module, raised
from stream_doctor.values.events import MISSING

#: where the application sees a call handed over, during the stream and once it ended (--client's run says it)
HANDS_AT = ("a chunk", "the summed AIMessageChunk's tool_calls")


def run(capture: Capture, frames: list[Frame], original: Original | None = None) -> Outcome:
    from stream_doctor.clients.library.pydantic_ai_models import _provider

    position: list[Pos | None] = [None]
    model = _model(_provider(capture) == "anthropic", capture, frames, position, original)
    total: Any = None
    error: tuple[str, int | None, str] | None = None
    try:
        with warnings.catch_warnings():
            # langchain-anthropic warns on every server tool block it leaves out ("unexpected tool content block")
            warnings.simplefilter("ignore", UserWarning)
            for chunk in model.stream("replay"):
                total = chunk if total is None else total + chunk
    except Exception as exc:  # noqa: BLE001 - what the stack raises is the result
        error = raised(exc, position)
    if error is not None:
        return Outcome((), *error)
    calls = getattr(total, "tool_calls", None) or []
    invalid = getattr(total, "invalid_tool_calls", None) or []
    seen = [Seen(None, call.get("id"), call["name"], call["args"]) for call in calls]
    seen += [Seen(None, call.get("id"), call.get("name") or "", MISSING) for call in invalid]
    return Outcome(tuple(seen), None, None)


def _model(
    anthropic: bool, capture: Capture, frames: list[Frame], position: list[Pos | None], original: Original | None
) -> Any:
    httpx = http_module("anthropic" if anthropic else "openai")

    def handler(request: Any) -> Any:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=body_chunks(capture, frames, position, original)
        )

    http_client = httpx.Client(transport=httpx.MockTransport(handler))
    if anthropic:
        import anthropic as sdk
        from langchain_anthropic import ChatAnthropic

        model = ChatAnthropic(model_name="replay", api_key="test", max_retries=0, timeout=None, stop=None)  # type: ignore[arg-type]
        # ChatAnthropic builds its SDK client itself (a cached property): hand it one on the mock transport
        model.__dict__["_client"] = sdk.Anthropic(
            api_key="test", base_url="http://capture.invalid", max_retries=0, http_client=http_client
        )
        return model
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model="replay",
        api_key="test",  # type: ignore[arg-type]
        base_url="http://capture.invalid/v1",
        max_retries=0,
        http_client=http_client,
    )
