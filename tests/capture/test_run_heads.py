"""A run's head is found by the bytes its form starts with, then the form's regex
(``capture/runs._next_event``): it must find what the regex's own search finds, wherever the
bytes put near misses (the same start, then another field) and whatever the line ends.
"""

from __future__ import annotations

import orjson
import pytest

from stream_doctor.capture import runs
from stream_doctor.providers import anthropic, bedrock, cohere, gemini, openai_chat, openai_responses, vercel_ai

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FORMS = [anthropic, bedrock, cohere, gemini, openai_chat, openai_responses, vercel_ai]


def _responses(sequence: int, fragment: str, field: str = "delta") -> bytes:
    data = {
        "type": "response.function_call_arguments.delta",
        "sequence_number": sequence,
        "item_id": "fc_1",
        "output_index": 0,
        field: fragment,
    }
    return b"event: response.function_call_arguments.delta\ndata: " + orjson.dumps(data) + b"\n\n"


PIECES = {
    "delta": lambda n: _responses(n, f"piece {n} \\ é"),
    "near miss": lambda n: _responses(n, "x", field="arguments"),  # the same start, another field
    "cut start": lambda n: _responses(n, "x")[:30] + b"\n\n",
    "other": lambda n: b'event: response.output_item.done\ndata: {"type":"response.output_item.done"}\n\n',
    "anthropic": lambda n: (
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"a"}}\n\n'
    ),
}


@settings(max_examples=200, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(sorted(PIECES)), max_size=12),
    line_end=st.sampled_from([b"\n", b"\r\n", b"\r"]),
    start=st.integers(0, 40),
)
def test_the_next_head_is_the_one_the_regex_search_finds(pieces: list[str], line_end: bytes, start: int) -> None:
    data = b"".join(PIECES[name](number) for number, name in enumerate(pieces)).replace(b"\n", line_end)
    for module in FORMS:
        form = module.run_form
        event, prefix = form.event(line_end), form.prefix(line_end)
        at = min(start, len(data))
        found = runs._next_event(event, prefix, data, at, len(data))
        searched = event.search(data, at, len(data))
        assert (found and found.span()) == (searched and searched.span()), module.__name__


def test_every_form_match_starts_with_its_prefix() -> None:
    data = b"".join(PIECES["delta"](n) for n in range(3))
    match = openai_responses.run_form.event(b"\n").search(data)
    assert match is not None and data.startswith(openai_responses.run_form.prefix(b"\n"), match.start())
    assert len(openai_responses.run_form.prefix(b"\n")) >= runs.DISTINCT  # found by bytes.find
    assert cohere.run_form.prefix(b"\n") == b""  # an optional first line: the regex searches alone


@pytest.mark.parametrize(
    ("source", "prefix"),
    [
        (rb'\{"a":\{"b"', b'{"a":{"b"'),
        (rb"event: x\.y\ndata: ", b"event: x.y\ndata: "),
        (rb"ab?c", b"a"),  # a character a quantifier follows may be missing
        (rb"ab*", b"a"),
        (rb"ab{2}", b"a"),
        (rb"(?:event: x\n)?data: ", b""),
        (rb"a\d", b"a"),  # a class ends it
        (rb"a[bc]", b"a"),
        (rb"ab|c", b""),  # near miss: the first branch of an alternation is not where every match starts
        (rb"(?:a|b)c", b""),
        (rb"a(?:b|c)", b"a"),
        (rb"a[|]b", b"a"),
    ],
)
def test_a_literal_prefix(source: bytes, prefix: bytes) -> None:
    assert runs.literal_prefix(source) == prefix
