"""Each profile that models a Python library agrees with that library, at its pinned version, on every
project fixture of its provider: what it hands over, at which event, and what it raises.

The libraries come with the test extra (``pip install -e '.[test]'``); the profiles do not import
them. A fixture where the two disagree fails here, so a profile cannot drift from the code it
claims to model. Conversations (HAR files, cassettes) are left out: the SDKs read one response.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_doctor.api import replay
from stream_doctor.capture import load
from stream_doctor.clients import PROFILES, run
from stream_doctor.clients.library import LIBRARIES, LibraryMissing, outcome_of
from stream_doctor.clients.library import load as load_library
from stream_doctor.util.install import REPOSITORY
from tests.clients.streams import written_back_framings
from tests.conftest import fixture_files

#: every fixture of every Python profile's providers through its real library (about 500 pairs)
pytestmark = [pytest.mark.slow]

#: Where a profile is known to disagree with its library, and why (each one documented in the profile).
KNOWN_DIVERGENCES: dict[tuple[str, str], str] = {}


def _pairs() -> list[tuple[str, Path]]:
    pairs = []
    for name in sorted(LIBRARIES):
        pairs += [
            (name, path)
            for path in fixture_files(*PROFILES[name].providers, suffixes=(".sse", ".jsonl"))
            # an SDK helper-stream log is what the SDK wrote, not a response body it reads
            if not path.name.startswith("sdk_helper_")
        ]
    return pairs


@pytest.mark.parametrize(("client", "path"), _pairs(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_profile_agrees_with_the_library(client: str, path: Path) -> None:
    try:
        library = load_library(client)
    except LibraryMissing as missing:  # pragma: no cover - the test extra installs them
        pytest.skip(str(missing))
    report = replay(path, keep_events=True)
    events = [event for _, event in report.events]
    handoffs, error = run(PROFILES[client], events, report.stream.capture.provider, written_back_framings(report))
    capture = load(str(path), None)
    expected = library(capture, capture.frames)
    known = KNOWN_DIVERGENCES.get((client, path.name))
    if known is not None:
        assert outcome_of(handoffs, error, client) != expected, f"fixed? remove it from KNOWN_DIVERGENCES: {known}"
        pytest.xfail(known)
    assert outcome_of(handoffs, error, client) == expected


def test_a_missing_library_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_openai(name: str, *args: object, **kwargs: object) -> object:
        if name == "openai" or name.startswith("openai."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_openai)
    monkeypatch.setattr("importlib.import_module", lambda name, *a: no_openai(name))
    with pytest.raises(LibraryMissing) as missing:
        load_library("openai-python")
    assert str(missing.value) == (
        'openai-python needs the openai package: pip install -e ".[clients]" in a clone of stream-doctor, '
        f'or pip install "stream-doctor[clients] @ git+{REPOSITORY}"'
    )


def _sse(events: list[dict[str, object]], named: bool) -> bytes:
    import json

    frames = [(f"event: {e['type']}\n" if named else "") + f"data: {json.dumps(e)}\n\n" for e in events]
    return "".join(frames).encode() + (b"" if named else b"data: [DONE]\n\n")


def _anthropic_call(arguments: str) -> bytes:
    message = {"id": "m", "type": "message", "role": "assistant", "content": [], "model": "c"}
    block = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    return _sse(
        [
            {"type": "message_start", "message": {**message, "usage": {"input_tokens": 1, "output_tokens": 1}}},
            {"type": "content_block_start", "index": 0, "content_block": block},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": arguments},
            },
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 3}},
            {"type": "message_stop"},
        ],
        named=True,
    )


def _chat_call(index: object) -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    start = {"index": index, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}
    more = {"index": index, "function": {"arguments": '{"a": 1}'}}
    return _sse(
        [
            {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [start]}}]},
            {**chunk, "choices": [{"index": 0, "delta": {"tool_calls": [more]}}]},
            {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        ],
        named=False,
    )


#: issue 31's --client crashes, and their near misses: arguments nested past jiter's recursion limit (201
#: levels: anthropic-python raises ValueError at the delta) and just inside it; a tool call index that is
#: a list or an object (pydantic-ai raises TypeError: unhashable) and an integer one.
HOSTILE = {
    "unclosed_5000.sse": _anthropic_call("[" * 5000),
    "objects_5000.sse": _anthropic_call('{"a":' * 5000),
    "closed_5000.sse": _anthropic_call("[" * 5000 + "]" * 5000),
    "unclosed_201.sse": _anthropic_call("[" * 201),
    "index_list.sse": _chat_call([]),
    "index_object.sse": _chat_call({}),
    "index_integer.sse": _chat_call(0),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_profiles_agree_with_the_library_on_hostile_streams(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(HOSTILE[name])
    report = replay(path, keep_events=True)
    events = [event for _, event in report.events]
    capture = load(str(path), None)
    compared = 0
    for client in sorted(LIBRARIES):
        if report.stream.capture.provider not in PROFILES[client].providers:
            continue
        handoffs, error = run(PROFILES[client], events, report.stream.capture.provider, written_back_framings(report))
        assert outcome_of(handoffs, error, client) == load_library(client)(capture, capture.frames), client
        compared += 1
    assert compared >= 3


@pytest.mark.parametrize("depth", [199, 200, 201, 202, 203, 5000])
@pytest.mark.parametrize("opener", ["[", '{"k":', "[1,", '{"a": 0, "k": '])
@pytest.mark.parametrize("tail", ["", "1", '"ab', '"ab"', " ", "]", "{}", "tr"])
def test_the_partial_parser_meets_jiters_recursion_limit(depth: int, opener: str, tail: str) -> None:
    """anthropic-python reads a buffer with ``jiter.from_json(partial_mode=True)``, which raises past 201 levels."""
    from jiter import from_json

    from stream_doctor.clients._partial import NOTHING, PartialJSONError, partial_parse

    text = opener * depth + tail
    try:
        expected: object = from_json(text.encode(), partial_mode=True)
    except ValueError:
        expected = ValueError
    try:
        value = partial_parse(text, "drop", trailing=True, blank_ok=False)
        ported: object = {} if value is NOTHING else value
    except PartialJSONError:
        ported = ValueError
    assert ported == expected
