"""An id keeps its provider's prefix when minimize shortens it and when --redact masks it
(docs/minimize.md): one definition (``whitelist.id_prefix``), one case per provider's id style."""

from __future__ import annotations

import pytest

import stream_doctor
from stream_doctor.minimizer.whitelist import id_prefix, is_masked, mask_id
from tests.conftest import FIXTURES

# (an id as the provider writes it, the tool names of its capture, the prefix it keeps)
STYLES = [
    ("toolu_01A09q90qw90lq917835lq9", (), "toolu_"),  # Anthropic
    ("call_ubZdSnNnlFlribfq9lhtTuhP", (), "call_"),  # OpenAI Chat, Ollama, Vercel AI SDK
    ("fc_67ab2c3d4e5f60718293a4b5c6d7e8f9", (), "fc_"),  # OpenAI Responses' item id
    ("chatcmpl-yKrOI9dyLDbn9xlXhIYA9C9CnBYv", (), "chatcmpl-"),  # OpenAI Chat's completion id
    ("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", (), "tooluse_"),  # Bedrock Converse
    ("get_stock_price_wr1v31thu4pa", ("get_stock", "get_stock_price"), "get_stock_price_"),  # Cohere: the tool's name
    ("book_room_fd0652ho9vj8", ("book_room",), "book_room_"),  # Cohere
    ("k3v8w2pn", ("k3v8",), ""),  # Gemini: no prefix (a name without its "_" is none)
    ("D681PevKs", (), ""),  # Mistral's nine characters
    ("3d8b6ce1-88a6-4a3a-8801-abd95444022a", (), ""),  # a UUID: its first group is a token, not a word
    ("AbCdEf_xyz123456", (), ""),  # a token that happens to hold a separator: not lower-case, no prefix
]


@pytest.mark.parametrize(("value", "names", "prefix"), STYLES, ids=[style[0] for style in STYLES])
def test_each_provider_id_style_keeps_its_prefix(value: str, names: tuple[str, ...], prefix: str) -> None:
    assert id_prefix(value, names) == prefix


def test_a_tool_name_that_is_the_whole_id_is_no_prefix() -> None:
    assert id_prefix("get_weather_", ("get_weather",)) == "get_"  # nothing after it: the name is not an id's head


@pytest.mark.parametrize(("value", "prefix"), [(v, p) for v, n, p in STYLES if not n])
def test_a_masked_id_keeps_its_prefix_and_none_of_its_own_characters(value: str, prefix: str) -> None:
    masked = mask_id(value)
    assert masked.startswith(prefix) and len(masked) == len(value)
    rest = masked[len(prefix) :]
    assert is_masked(rest) or rest.startswith("0" * 16)  # a hex id stays hex: zeros, then its digest


# (a fixture, a code it shows, the prefix its call ids keep once minimized)
MINIMIZED = [
    ("anthropic/empty_input_bug.jsonl", "SD102", "toolu_"),
    ("openai/finish_length_mid_arguments.sse", "SD301", "call_"),
    ("openai-responses/stream_cut.sse", "SD301", "call_"),
    ("cohere/max_tokens_mid_call.jsonl", "SD301", "send_email_"),
    ("bedrock/converse_max_tokens_mid_call.jsonl", "SD301", "tooluse_"),
    ("gemini/parallel_calls_with_ids.sse", "SD525", "id_"),  # Gemini's ids have none: the minimizer's own
]


@pytest.mark.parametrize(("fixture", "code", "prefix"), MINIMIZED, ids=[case[0] for case in MINIMIZED])
def test_minimize_shortens_each_provider_id_to_its_prefix_and_a_number(fixture: str, code: str, prefix: str) -> None:
    result = stream_doctor.minimize(str(FIXTURES / fixture), code)
    with stream_doctor.replay(result.data) as report:
        ids = {call.call_id for call in report.calls if call.call_id}
    assert ids and all(i.startswith(prefix) and i[len(prefix) :].isdigit() for i in ids), ids
