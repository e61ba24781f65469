"""The Mistral adapter: OpenAI's framing with Mistral's whole calls, finish reasons, object
arguments and thinking chunks; and how it is told apart from OpenAI."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.providers import detect, mistral, openai_chat
from stream_doctor.values.events import BlockDelta, Event, Problem
from tests.conftest import CORPUS, NO_CORPUS, corpus_files
from tests.helpers import accumulated

#: The Vercel AI SDK's Mistral recordings, in the corpus.
MISTRAL_FIXTURES = "vercel-ai/packages/mistral/src/__fixtures__"


def frames(values: list[Any]) -> list[Frame]:
    return [
        Frame(Pos(n, n, n * 100), b"[DONE]" if v is NOT_JSON else orjson.dumps(v), v) for n, v in enumerate(values, 1)
    ]


def events(values: list[Any]) -> list[Event]:
    translator = mistral.translator()
    return [e for f in frames(values) for e in translator.feed(f)] + translator.close()


def accumulate(values: list[Any]) -> AccumulatedStream:
    return accumulated(mistral, frames(values), "sse", "m.sse")


def chunk(delta: dict[str, Any], finish: str | None = None, model: str = "mistral-large-latest", **extra: Any) -> Any:
    return {
        "id": "0f3c1a2b4d5e6f708192a3b4c5d6e7f8",
        "object": "chat.completion.chunk",
        "created": 1761741000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        **extra,
    }


def whole(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"content": None, "tool_calls": [{"id": call_id, "function": {"name": name, "arguments": arguments}}]}


def test_whole_calls_in_the_finish_chunk_are_keyed_by_their_ids() -> None:
    stream = accumulate(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk(
                {
                    "content": None,
                    "tool_calls": [
                        {"id": "gSIMJiOkT", "function": {"name": "weather", "arguments": '{"city": "Lyon"}'}},
                        {"id": "Xq81LmPz2", "function": {"name": "air", "arguments": '{"city": "Lyon"}'}},
                    ],
                },
                "tool_calls",
                usage={"prompt_tokens": 1, "total_tokens": 2, "completion_tokens": 1},
            ),
            NOT_JSON,
        ]
    )
    assert [(c.call_id, c.index, c.arguments, c.status) for c in stream.calls] == [
        ("gSIMJiOkT", None, {"city": "Lyon"}, "complete"),
        ("Xq81LmPz2", None, {"city": "Lyon"}, "complete"),
    ]
    assert not stream.stream_problems


def test_object_arguments_are_allowed_here_but_not_for_openai() -> None:
    values = [chunk(whole("gSIMJiOkT", "weather", {"city": "Nice"}), "tool_calls"), NOT_JSON]
    assert accumulate(values).calls[0].arguments == {"city": "Nice"}
    assert not [e for e in events(values) if isinstance(e, Problem)]
    translator = openai_chat.translator()
    produced = [e for f in frames(values) for e in translator.feed(f)]
    assert [e.kind for e in produced if isinstance(e, Problem)] == ["malformed-frame"]


@pytest.mark.parametrize(("reason", "category"), [("error", "error"), ("model_length", "length"), ("stop", "end")])
def test_finish_reasons(reason: str, category: str) -> None:
    stream = accumulate([chunk({"content": "x"}, reason), NOT_JSON])
    assert (stream.messages[0].stop_reason, stream.messages[0].stop_category) == (reason, category)


def test_thinking_chunks_in_content_are_a_reasoning_block() -> None:
    produced = events(
        [
            chunk(
                {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Let me see"}]}]},
                model="magistral-medium-2509",
            )
        ]
    )
    deltas = [e for e in produced if isinstance(e, BlockDelta)]
    assert [(d.delta_type, d.size) for d in deltas] == [("thinking", 10)]


def test_sniff_needs_a_mistral_id_and_one_more_mistral_trait() -> None:
    plain = chunk({"content": "hi"}, model="some-model")
    assert mistral.sniff(frames([plain])) == 0  # bare hex ids alone (SGLang has them too) are not enough
    assert mistral.sniff(frames([chunk({"content": "hi"})])) > openai_chat.sniff(frames([chunk({"content": "hi"})]))
    delta_index = chunk({"index": 0, "content": ""}, model="zai-glm-5-2")
    assert detect(frames([delta_index]))[0].name == "mistral"
    openai_like = dict(chunk({"content": "hi"}), id="chatcmpl-ABfwERreu9s99xXsVuOWtIB2UOx62")
    assert detect(frames([openai_like]))[0].name == "openai"


@pytest.mark.skipif(not (CORPUS / MISTRAL_FIXTURES).is_dir(), reason=NO_CORPUS)
def test_both_corpus_captures_are_detected_as_mistral() -> None:
    for path in corpus_files(MISTRAL_FIXTURES, suffixes=(".chunks.txt",)):
        values = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
        assert detect(frames(values))[0].name == "mistral", path.name
