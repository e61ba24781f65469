"""The variants' registry and plans: what each promises of the bytes it writes, checked on the project's fixtures
and with the reference accumulator (the library differential is ``test_variants_libraries.py``)."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from stream_doctor.api import replay
from stream_doctor.clients import PROFILES
from stream_doctor.serve import faults
from stream_doctor.serve.variants import (
    BYTE_PER_READ_LIMIT,
    KINDS,
    VARIANTS,
    NotApplicable,
    _by_name,
    plan_for,
    variant_names,
)
from stream_doctor.serve.wire import Recorded
from tests.conftest import FIXTURES
from tests.serve.recorded import recorded_of, written

ONE_CALL = FIXTURES / "anthropic" / "one_call.sse"
PARALLEL = FIXTURES / "openai" / "parallel_calls.sse"
#: the variants that only cut the body into other reads: the bytes written are the body's
CUTTING = ("event-per-read", "byte-per-read", "random-cuts", "coalesced", "one-read", "recorded-pacing")


def _calls(data: bytes, provider: str) -> list[tuple[str | None, str | None, object]]:
    """What the reference accumulator reads from a body: each call's id, name and input."""
    return [(c.call_id, c.name, c.arguments) for c in replay(data, provider=provider).stream.calls]


def test_the_registry_declares_each_variant_once_with_one_sentence() -> None:
    assert all(name == variant.name for name, variant in VARIANTS.items())  # each name written once: the key is it
    with pytest.raises(ValueError, match=r"variants declared twice: \['crlf'\]"):
        _by_name(VARIANTS["crlf"], VARIANTS["ping"], VARIANTS["crlf"])
    assert variant_names() == tuple(VARIANTS)
    assert set(variant_names()) == {n for kind in KINDS for n in variant_names(kind)}
    for variant in VARIANTS.values():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", variant.name)
        # one sentence: a capital, one full stop at the end
        assert variant.description[0].isupper() and variant.description.endswith(".")
        assert ". " not in variant.description, variant.name


def test_each_quirk_names_profiled_libraries_and_where_the_provider_sends_it() -> None:
    assert variant_names("quirk")
    for name in variant_names("quirk"):
        quirk = VARIANTS[name]
        assert quirk.libraries and all(library in PROFILES for library in quirk.libraries), name
        assert quirk.source, name
    assert all(not VARIANTS[n].libraries for n in variant_names("meaning") + variant_names("fault"))


def test_an_unknown_name_and_a_variant_that_does_not_apply_say_so() -> None:
    with pytest.raises(ValueError, match="no variant named 'sideways'"):
        plan_for("sideways")
    anthropic = recorded_of(ONE_CALL, "anthropic")
    eventstream = Recorded(
        "bedrock", 200, (("Content-Type", "application/vnd.amazon.eventstream"),), b"\0", ((None, b"\0"),)
    )
    with pytest.raises(NotApplicable, match="crlf applies to server-sent events, not to an AWS event stream"):
        plan_for("crlf")(eventstream)
    assert VARIANTS["ping"].skipped(recorded_of(PARALLEL, "openai")) == (
        "ping does not apply to openai: only Anthropic documents a ping event"
    )
    assert VARIANTS["recorded-pacing"].skipped(anthropic) == (
        "recorded-pacing needs the times of the events, and the capture recorded none"
    )
    text = b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\ndata: [DONE]\n\n'
    chat = Recorded("openai", 200, (("content-type", "text/event-stream"),), text, ((None, text),))
    assert VARIANTS["index-from-one"].skipped(chat) == (
        "index-from-one does not apply: the stream holds no tool_calls entries to rewrite"
    )
    big = b"data: " + b"x" * BYTE_PER_READ_LIMIT + b"\n\n"
    too_big = Recorded("openai", 200, (("content-type", "text/event-stream"),), big, ((None, big),))
    assert VARIANTS["byte-per-read"].skipped(too_big) == (
        "byte-per-read does not apply: the body is 262,152 bytes and a read per byte is played up to 262,144"
    )
    # the near miss: each applies where it should
    assert VARIANTS["crlf"].skipped(anthropic) is None and VARIANTS["ping"].skipped(anthropic) is None


@pytest.mark.parametrize("name", CUTTING)
def test_a_variant_that_only_cuts_writes_the_body_as_recorded(name: str) -> None:
    recorded = _timed(recorded_of(ONE_CALL, "anthropic"))
    for seed in range(5):
        plan = plan_for(name, seed)(recorded)
        assert written(plan) == recorded.body and plan.then == "end" and plan.status == 200


def test_the_same_seed_gives_the_same_plan_and_another_seed_another() -> None:
    recorded = recorded_of(PARALLEL, "openai")
    assert plan_for("random-cuts", 7)(recorded) == plan_for("random-cuts", 7)(recorded)
    assert plan_for("random-cuts", 7)(recorded) != plan_for("random-cuts", 8)(recorded)


def test_random_cuts_fall_inside_a_utf8_character_and_inside_an_escape() -> None:
    body = 'data: {"text":"é","x":"\\u00e9"}\n\n'.encode()
    recorded = Recorded("openai", 200, (("content-type", "text/event-stream"),), body, ((None, body),))
    character = body.index("é".encode()) + 1
    escape = body.index(b"\\u")
    for seed in range(20):
        ends = _read_ends(plan_for("random-cuts", seed)(recorded).reads)
        assert character in ends
        assert any(escape < end < escape + 6 for end in ends)


def test_recorded_pacing_pauses_as_recorded() -> None:
    plan = plan_for("recorded-pacing")(_timed(recorded_of(ONE_CALL, "anthropic")))
    assert [pause for pause, _ in plan.reads] == pytest.approx([0.0] + [0.25] * (len(plan.reads) - 1))


@pytest.mark.parametrize("name", ("crlf", "keep-alive", "ping", "coalesced"))
def test_a_meaning_keeping_rewrite_reads_the_same_to_the_reference(name: str) -> None:
    for path, provider in ((ONE_CALL, "anthropic"), (FIXTURES / "anthropic" / "parallel_calls.sse", "anthropic")):
        recorded = recorded_of(path, provider)
        plan = plan_for(name, 3)(recorded)
        assert written(plan) != recorded.body or name == "coalesced"
        assert _calls(written(plan), provider) == _calls(recorded.body, provider)


def test_crlf_ends_every_line_with_crlf() -> None:
    data = written(plan_for("crlf")(recorded_of(PARALLEL, "openai")))
    assert data.count(b"\n") == data.count(b"\r\n") > 0


def test_a_cut_keeps_the_first_calls_start_and_not_its_completion() -> None:
    recorded = recorded_of(ONE_CALL, "anthropic")
    began, completed = faults.first_call(recorded) or (0, None)
    assert completed is not None
    assert b"content_block_start" in recorded.events[began][1] and b"tool_use" in recorded.events[began][1]
    assert b"content_block_stop" in recorded.events[completed][1]
    for seed in range(10):
        plan = plan_for("cut-after-event", seed)(recorded)
        assert plan.then == "close" and began + 1 <= len(plan.reads) <= completed
        dropped = plan_for("disconnect-after-ms", seed)(recorded)
        assert (
            dropped.then == "close" and dropped.reads[-1][1] == b"" and began + 2 <= len(dropped.reads) <= completed + 1
        )
        assert "content-length" not in {k.lower() for k, _ in dropped.headers}
    before = plan_for("cut-before-completion", 0)(recorded)
    assert before.then == "close" and len(before.reads) == completed  # every event but the completion


@pytest.mark.parametrize(
    ("provider", "status", "shape"),
    [
        ("anthropic", 429, {"type": "error", "error": {"type": "rate_limit_error", "message": faults.MESSAGE}}),
        ("anthropic", 529, {"type": "error", "error": {"type": "overloaded_error", "message": faults.MESSAGE}}),
        ("gemini", 429, {"error": {"code": 429, "message": faults.MESSAGE, "status": "RESOURCE_EXHAUSTED"}}),
        ("ollama", 429, {"error": faults.MESSAGE}),
    ],
)
def test_a_refusal_is_in_the_providers_own_shape(provider: str, status: int, shape: object) -> None:
    recorded = Recorded(provider, 200, (), b"x", ((None, b"x"),))
    plan = plan_for(f"status-{status}")(recorded)
    assert plan.status == status and orjson.loads(written(plan)) == shape
    assert ("Content-Type", "application/json") in plan.headers


def test_an_error_event_is_the_providers_own() -> None:
    anthropic = written(plan_for("error-event-first")(recorded_of(ONE_CALL, "anthropic")))
    assert anthropic.startswith(b"event: error\ndata: ") and b'"overloaded_error"' in anthropic
    chat = written(plan_for("overloaded-mid-stream", 1)(recorded_of(PARALLEL, "openai")))
    assert chat.endswith(
        b'data: {"error":{"message":"'
        + faults.MESSAGE.encode()
        + b'","type":"server_error","param":null,"code":null}}\n\n'
    )
    assert b"[DONE]" not in chat


def _entries(data: bytes) -> list[dict[str, object]]:
    found = []
    for line in data.splitlines():
        if line.startswith(b"data: {"):
            for choice in orjson.loads(line[6:]).get("choices", []):
                found += choice.get("delta", {}).get("tool_calls") or []
    return found


def test_the_chat_quirks_rewrite_the_calls_as_those_providers_send_them() -> None:
    recorded = recorded_of(PARALLEL, "openai")
    original = _entries(recorded.body)
    shifted = _entries(written(plan_for("index-from-one")(recorded)))
    assert [e["index"] for e in shifted] == [int(e["index"]) + 1 for e in original]  # type: ignore[call-overload]
    repeated = _entries(written(plan_for("repeated-id-and-name")(recorded)))
    assert all(e.get("id") and e["function"]["name"] for e in repeated)  # type: ignore[index]
    whole = _entries(written(plan_for("whole-calls-without-index")(recorded)))
    assert [set(e) for e in whole] == [{"id", "function"}] * 2
    # what the reference accumulator reads is the same calls (the quirk is a real, readable stream)
    for name in ("repeated-id-and-name", "whole-calls-without-index", "data-ping"):
        assert _calls(written(plan_for(name, 2)(recorded)), "openai") == _calls(recorded.body, "openai"), name


def _timed(recorded: Recorded) -> Recorded:
    events = tuple((0.25 * number, data) for number, (_, data) in enumerate(recorded.events))
    return Recorded(recorded.provider, recorded.status, recorded.headers, recorded.body, events)


def _read_ends(reads: tuple[tuple[float, bytes], ...]) -> set[int]:
    ends, at = set(), 0
    for _, data in reads:
        at += len(data)
        ends.add(at)
    return ends


def test_fixture_paths_exist() -> None:
    assert all(Path(p).is_file() for p in (ONE_CALL, PARALLEL))
