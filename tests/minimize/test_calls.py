"""Calls as whole units: a capture of many calls in one turn shrinks to the broken call in a few replays,
and the calls that stay are numbered as the provider would have numbered them."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stream_doctor
from benchmarks.captures import write_calls
from stream_doctor.capture import load
from stream_doctor.clients.library import LibraryRun, Original
from stream_doctor.clients.library import load as load_library
from stream_doctor.minimizer.calls import renumbered
from stream_doctor.minimizer.units import Unit
from stream_doctor.values.findings import Severity


def _event(payload: dict[str, object], turn: int = 1, call: int | None = None) -> Unit:
    data = orjson.dumps(payload)
    return Unit(b"data: " + data + b"\n\n", "event", turn, data, call)


def test_forty_calls_in_one_turn_shrink_to_one_call_in_a_few_replays(tmp_path: Path) -> None:
    path = tmp_path / "forty.sse"
    write_calls(path, 40)  # every 10th call's arguments are cut: SD201 on calls 1, 11, 21, 31

    result = stream_doctor.minimize(path, "SD201")

    assert [f.code for f in result.kept] == ["SD201"]
    assert result.frames_after <= 6 < 400 < result.frames_before
    assert result.checks < 100  # the calls go as units: before, 4,223 replays and 9,931 bytes of 40 calls' stubs
    with stream_doctor.replay(result.data) as small:
        (call,) = small.calls
        assert call.index == 0 and call.name == "write_file" and (call.call_id or "").startswith("toolu_")
        assert not [f for f in small.findings if f.severity >= Severity.WARNING and f.code != "SD201"]
    assert stream_doctor.minimize(result.data, "SD201").data == result.data


def test_the_indices_after_a_removed_call_are_lowered_by_the_indices_it_held() -> None:
    start = {"type": "content_block_start", "content_block": {"type": "tool_use"}}
    units = [_event({**start, "index": n}, call=n) for n in range(4)]

    kept = renumbered([units[0], units[3]], [units[1], units[2]])

    assert [orjson.loads(unit.payload or b"")["index"] for unit in kept] == [0, 1]
    assert [unit.call for unit in kept] == [0, 3]  # still the original's calls, for the next pass


def test_a_gap_the_capture_had_stays_and_another_path_or_turn_is_left_alone() -> None:
    def chunk(choice: int, call: int, turn: int = 1) -> Unit:
        delta = {"tool_calls": [{"index": call, "function": {"arguments": "{}"}}]}
        return _event({"choices": [{"index": choice, "delta": delta}]}, turn, call)

    # index 1 was never sent (SD507's gap); index 0 goes; index 1 of the next turn is another message's
    kept = renumbered([chunk(0, 2), chunk(0, 1, turn=2)], [chunk(0, 0)])

    values = [orjson.loads(unit.payload or b"")["choices"][0] for unit in kept]
    assert [value["delta"]["tool_calls"][0]["index"] for value in values] == [1, 1]
    assert [value["index"] for value in values] == [0, 0]  # the choice's index is no call's position


def _sse(events: list[dict[str, object]]) -> bytes:
    return b"".join(b"event: " + str(e["type"]).encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n" for e in events)


#: Whole arguments a broken call's are cut from: strings with escapes (``\\"``, ``\\u00e9``, ``\\n``), a number,
#: a literal, nested values, so a cut lands inside a string, after a key, after a comma or inside an escape.
WHOLE = (
    '{"path": "a/b", "content": "x"}',
    '{"path": "say \\"hi\\"\\n", "n": 12.5, "ok": true}',
    '{"q": "caf\\u00e9", "tags": ["a", "b"], "limit": null}',
    '{"edits": [{"old": "x\\\\y", "new": ""}], "dry": false}',
)


def _message(calls: int, broken: dict[int, list[str]], texts: set[int]) -> bytes:
    """One Anthropic message of ``calls`` calls (a text block before those in ``texts``); the arguments of
    those in ``broken`` are the fragments given (a cut object: SD201), the others whole in two fragments."""
    usage = {"input_tokens": 1, "output_tokens": 1}  # without it the SDK fails on message_delta's usage
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [], "usage": usage}
    events: list[dict[str, object]] = [{"type": "message_start", "message": message}]
    for call in range(calls):
        if call in texts:
            index = len([e for e in events if e["type"] == "content_block_start"])
            events += [
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": "Next."}},
                {"type": "content_block_stop", "index": index},
            ]
        index = len([e for e in events if e["type"] == "content_block_start"])
        block = {"type": "tool_use", "id": f"toolu_01Ab{call}cDeF", "name": f"tool_{call}", "input": {}}
        pieces = broken.get(call, ['{"path": "a', '/b"}'])
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        events += [
            {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": p}}
            for p in pieces
        ]
        events.append({"type": "content_block_stop", "index": index})
    delta = {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}
    return _sse([*events, delta, {"type": "message_stop"}])


@st.composite
def _cut(draw: st.DrawFn) -> list[str]:
    """One of ``WHOLE`` cut anywhere before its end, in one to four fragments."""
    text = draw(st.sampled_from(WHOLE))
    cut = text[: draw(st.integers(1, len(text) - 1))]
    bounds = sorted(draw(st.sets(st.integers(1, max(1, len(cut) - 1)), max_size=3)) | {0, len(cut)})
    return [cut[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if a < b]


def _read(sdk: LibraryRun, data: bytes) -> tuple[str | None, list[str | None]]:
    """What the Anthropic SDK does with the capture: the exception class it raises, and the calls it hands over."""
    capture = load("calls.sse", None, data)
    outcome = sdk(capture, capture.frames, Original(data))
    return outcome.error, [seen.name for seen in outcome.seen]


@pytest.mark.slow  # hypothesis: the real SDK fed 12 generated captures and their minimizations (5 s of CPU)
@settings(max_examples=int(os.environ.get("STREAM_DOCTOR_MINIMIZE_EXAMPLES", "12")), deadline=None)
@given(
    calls=st.integers(2, 6),
    broken=st.dictionaries(st.integers(0, 5), _cut(), min_size=1),
    texts=st.sets(st.integers(0, 5)),
)
def test_what_stays_of_many_calls_is_read_by_the_anthropic_sdk_as_the_original_was(
    calls: int, broken: dict[int, list[str]], texts: set[int]
) -> None:
    broken = {call: pieces for call, pieces in broken.items() if call < calls} or {calls - 1: ['{"pa']}
    data = _message(calls, broken, texts)
    sdk = load_library("anthropic-python")
    error, handed = _read(sdk, data)

    result = stream_doctor.minimize(data, "SD201", name="calls.sse")

    with stream_doctor.replay(result.data, name="calls.sse") as small:
        (call,) = small.calls
        assert call.index == 0 and call.name in {f"tool_{n}" for n in broken}
        assert not [f for f in small.findings if f.severity >= Severity.WARNING and f.code != "SD201"]
    # the real SDK indexes its blocks by the events' index (a gap or a stale index would raise there) and
    # reads each call's fragments as they come (a cut object reads, a cut ``true`` or a stray ``/`` raises)
    assert error is None and call.name in handed  # the original: every cut object is read, as a call
    assert _read(sdk, result.data) == (None, [call.name])


def test_a_cut_object_is_not_shortened_into_a_cut_scalar_or_invalid_json() -> None:
    # the strings pass once made ``{"pa`` + ``th": "x\\`` into ``t`` (a cut ``true``) or ``/``: still
    # SD201, but the SDK raises ValueError on either, where it read the original as a call
    data = _message(2, {1: ['{"pa', 'th": "x\\']}, set())
    sdk = load_library("anthropic-python")

    result = stream_doctor.minimize(data, "SD201", name="calls.sse")

    (kept,) = result.kept
    assert kept.kind == "truncated object"
    assert _read(sdk, result.data) == (None, ["tool_1"])


def test_a_cut_scalar_stays_a_cut_scalar() -> None:
    # the near miss: arguments that are no object to begin with keep what they are, and the SDK's error
    data = _message(2, {0: ["tr"]}, set())
    sdk = load_library("anthropic-python")
    assert _read(sdk, data)[0] == "ValueError"

    result = stream_doctor.minimize(data, "SD201", name="calls.sse")

    (kept,) = result.kept
    assert kept.kind == "truncated boolean"
    assert _read(sdk, result.data)[0] == "ValueError"
