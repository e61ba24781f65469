"""Runs of fragment events read whole (capture/runs.py) change nothing a replay reports.

Every fixture and every capture of the shared corpus is replayed with runs and without (the private
switch ``runs.ENABLED``), with the provider detected and forced (forced, runs start at the first
byte), and the reports must be equal. Then streams where the reader must take a run, and near
misses where it must not: each near miss is one event that is not the canonical bytes, and the
replay must still equal the replay without runs, finding for finding, position for position.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_doctor.accumulate import spill
from stream_doctor.capture import runs
from stream_doctor.capture.base import Capture
from stream_doctor.capture.runs import FrameRun
from stream_doctor.capture.sse import stream_sse
from stream_doctor.engine.pipeline import replay
from stream_doctor.engine.stages import RunError
from stream_doctor.providers import anthropic, openai_chat
from stream_doctor.values.options import Options
from tests.conftest import CORPUS, NO_CORPUS, corpus_files, fixture_files

#: every fixture and corpus capture replayed twice, with and without runs, detected and forced
pytestmark = [pytest.mark.slow]

SUFFIXES = {".sse", ".jsonl", ".json", ".gz", ".txt", ".eventstream", ".har", ".yaml", ".yml"}


def _report(path: str, options: Options, enabled: bool, monkeypatch: pytest.MonkeyPatch, data: bytes | None) -> Any:
    monkeypatch.setattr(runs, "ENABLED", enabled)
    try:
        report = replay(path, options, data)
    except RunError as error:
        return "error", str(error), None, None
    findings = [(f.code, f.message, f.location, f.related) for f in report.findings]
    # the streams too: every call's fragments and their positions, the event counts, the last position
    streams = [turn.stream for turn in report.turns]
    return report.to_dict(), findings, report.stream.capture.provider, streams


def _same_both_ways(path: str, monkeypatch: pytest.MonkeyPatch, data: bytes | None = None) -> Any:
    """The report without runs, after checking that runs change nothing (provider detected, then forced)."""
    without = _report(path, Options(), False, monkeypatch, data)
    assert _report(path, Options(), True, monkeypatch, data) == without
    if without[0] == "error":
        return without
    forced = Options(provider=without[2])
    assert _report(path, forced, True, monkeypatch, data) == _report(path, forced, False, monkeypatch, data)
    return without


@pytest.mark.parametrize("path", [str(p) for p in fixture_files(suffixes=SUFFIXES, check_tree=True)])
def test_every_fixture_replays_alike_with_and_without_runs(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _same_both_ways(path, monkeypatch)


@pytest.mark.skipif(not CORPUS.is_dir(), reason=NO_CORPUS)
@pytest.mark.parametrize("path", [str(p) for p in corpus_files(suffixes=SUFFIXES)])
def test_every_corpus_capture_replays_alike_with_and_without_runs(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _same_both_ways(path, monkeypatch)


# -- Anthropic -------------------------------------------------------------------------------------


def _event(data: dict[str, Any], padding: int = 0) -> bytes:
    body = orjson.dumps(data)
    if padding:
        body = body[:-1] + b" " * padding + b"}"
    return b"event: " + str(data["type"]).encode() + b"\ndata: " + body + b"\n\n"


def _delta(fragment: str, index: int = 0, padding: int = 0) -> bytes:
    data = {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "input_json_delta", "partial_json": fragment},
    }
    return _event(data, padding)


def anthropic_stream(deltas: list[bytes]) -> bytes:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_01Runs",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        },
    }
    block = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "tool_use", "id": "toolu_01Runs", "name": "write_file", "input": {}},
    }
    end = [
        _event({"type": "content_block_stop", "index": 0}),
        _event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 9},
            }
        ),
        _event({"type": "message_stop"}),
    ]
    return b"".join([_event(start), _event(block), *deltas, *end])


def _fragments(count: int) -> list[str]:
    text = orjson.dumps(
        {"path": "a.py", "content": 'caf\u00e9 "quoted" path\\to\n\t\u20ac ' * (count // 3 + 1)}
    ).decode()
    size = max(1, len(text) // count)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _runs_read(data: bytes, form: runs.RunForm) -> list[Any]:
    reading = runs.RunReading()
    reading.form, reading.pending = form, False
    capture = Capture("t.sse", "sse", len(data), [])
    return [item for batch in stream_sse(((data, 0, len(data), True),), capture, runs=reading) for item in batch]


def test_a_run_of_canonical_deltas_is_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    fragments = _fragments(60)
    data = anthropic_stream([_delta(f, padding=i % 16) for i, f in enumerate(fragments)])
    items = _runs_read(data, anthropic.run_form)
    found = [item for item in items if item.kind == "run"]
    assert len(found) == 1 and len(found[0]) == len(fragments) - 1
    run: FrameRun = found[0]
    assert run.fragments == fragments[1:]
    # the positions are those of the frames the reader makes without runs
    assert [tuple(f.pos) for f in run.frames()] == [
        tuple(run.triples()[i : i + 3]) for i in range(0, len(run.triples()), 3)
    ]
    assert [f.value["delta"]["partial_json"] for f in run.frames()] == fragments[1:]
    report = _same_both_ways("t.sse", monkeypatch, data)
    assert report[0]["calls"][0]["arguments"] == orjson.loads("".join(fragments))


def test_a_run_with_crlf_line_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    fragments = _fragments(30)
    data = anthropic_stream([_delta(f) for f in fragments]).replace(b"\n", b"\r\n")
    found = [item for item in _runs_read(data, anthropic.run_form) if item.kind == "run"]
    assert len(found) == 1 and found[0].fragments == fragments[1:]
    assert found[0].triples()[1] == found[0].head.pos.line + 3
    _same_both_ways("t.sse", monkeypatch, data)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(draw=st.data())
def test_a_crlf_capture_with_one_bare_line_end_reads_no_runs(
    monkeypatch: pytest.MonkeyPatch, draw: st.DataObject
) -> None:
    """The reader proves a CRLF piece's line ends by counting only the bytes outside the runs it found
    (a run's events end their lines as its head does). One bare CR or LF anywhere, in a run's fragment,
    between its events or in the events around it, and the piece is read line by line, as when every
    byte was counted: no run taken, and the replay what it is without runs."""
    stream = anthropic_stream([_delta(f) for f in _fragments(24)]).replace(b"\n", b"\r\n")
    at = draw.draw(st.integers(0, len(stream)), label="at")
    bare = draw.draw(st.sampled_from([b"\r", b"\n"]), label="bare")
    odd = stream[:at] + bare + stream[at:]
    assert [item for item in _runs_read(odd, anthropic.run_form) if item.kind == "run"] == []
    _same_both_ways("t.sse", monkeypatch, odd)


#: One event in the middle of a run that is not the canonical bytes: the reader must not take it
#: into a run (the replay, findings and positions included, is what it is without runs).
NEAR_MISSES = {
    "fields in another order": b'event: content_block_delta\ndata: {"index":0,"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":"x"}}\n\n',
    "an extra field": b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"x","extra":1}}\n\n',
    "an extra field outside": b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"x"},"extra":1}\n\n',
    "a missing field": b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"partial_json":"x"}}\n\n',
    "whitespace after a colon": b'event: content_block_delta\ndata: {"type": "content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"x"}}\n\n',
    "another index": _delta("x", index=1),
    "an index that is a float": b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0.0,"delta":{"type":"input_json_delta","partial_json":"x"}}\n\n',
    "a bad escape": b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"a\\qb"}}\n\n',
    "a cut unicode escape": b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"a\\u12"}}\n\n',
    "a lone surrogate": b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"a\\ud800b"}}\n\n',
    "invalid UTF-8": b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"caf\xc3"}}\n\n',
    "a raw control character": b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"a\tb"}}\n\n',
    "an escaped closing quote": b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"a\\"}}\n\n',
    "another event name": b'event: content_block_deltas\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"x"}}\n\n',
    "no event line": b'data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"x"}}\n\n',
    "an id line": b'id: 7\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"x"}}\n\n',
    "a comment line": b': keep-alive\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"x"}}\n\n',
    "an extra blank line": b"\n" + _delta("x"),
    "padding with a tab": b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"x"}\t}\n\n',
    "a text delta": _event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}}),
    "a ping": _event({"type": "ping"}),
    "a CRLF event": _delta("x").replace(b"\n", b"\r\n"),
    "a cut event": _delta("x")[:-1],
}


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_a_near_miss_is_read_as_without_runs(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fragments = _fragments(40)
    deltas = [_delta(f, padding=i % 3) for i, f in enumerate(fragments)]
    deltas.insert(20, NEAR_MISSES[case])
    data = anthropic_stream(deltas)
    odd = data.index(b"".join(deltas[20:22]))  # where the near miss starts
    taken = [item for item in _runs_read(data, anthropic.run_form) if item.kind == "run"]
    # the canonical events around it are read in runs; but mixed line ends read none, and a fragment that
    # does not decode (the regex does not check UTF-8 or surrogates) has its whole run read frame by frame
    assert taken or case in ("a CRLF event", "invalid UTF-8", "a lone surrogate")
    for run in taken:  # but the near miss is in none
        assert not run.triples()[2] <= odd <= run.triples()[-1]
    _same_both_ways("t.sse", monkeypatch, data)
    _same_both_ways("t.sse", monkeypatch, data[:-5])  # and cut before its end


def test_runs_across_pieces_and_after_detection(monkeypatch: pytest.MonkeyPatch) -> None:
    """A capture longer than a piece (1 MiB), with the provider detected: the first frames are read
    one by one, the rest in runs, and the report is the same as without runs."""
    fragments = _fragments(12_000)
    deltas = [_delta(f, padding=i % 16) for i, f in enumerate(fragments)]
    deltas.insert(5000, _event({"type": "ping"}))
    data = anthropic_stream(deltas)
    assert len(data) > 1 << 20
    _same_both_ways("t.sse", monkeypatch, data)


# -- OpenAI Chat -----------------------------------------------------------------------------------

HEAD = {
    "id": "chatcmpl-CRuns",
    "object": "chat.completion.chunk",
    "created": 1761734412,
    "model": "gpt-4o-2024-08-06",
    "service_tier": "default",
    "system_fingerprint": "fp_07871e2ad8",
}


def _chunk(
    delta: dict[str, Any], finish: str | None = None, obfuscation: str | None = "aB3", azure: bool = False
) -> bytes:
    if azure:  # Azure OpenAI: keys in alphabetical order, content_filter_results in the choice, no obfuscation
        choice = {"content_filter_results": {}, "delta": delta, "finish_reason": finish, "index": 0, "logprobs": None}
        return b"data: " + orjson.dumps({"choices": [choice], **HEAD}, option=orjson.OPT_SORT_KEYS) + b"\n\n"
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    data: dict[str, Any] = {**HEAD, "choices": [choice], "usage": None}
    if obfuscation is not None:
        data["obfuscation"] = obfuscation
    return b"data: " + orjson.dumps(data) + b"\n\n"


def _args(fragment: str, index: int = 0, obfuscation: str | None = "xYz", azure: bool = False) -> bytes:
    delta = {"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}
    return _chunk(delta, obfuscation=obfuscation, azure=azure)


def openai_stream(chunks: list[bytes], azure: bool = False) -> bytes:
    call = {"index": 0, "id": "call_Runs", "type": "function", "function": {"name": "write_file", "arguments": ""}}
    first = _chunk({"role": "assistant", "content": None, "tool_calls": [call], "refusal": None}, azure=azure)
    end = _chunk({}, "tool_calls", azure=azure)
    return first + b"".join(chunks) + end + b"data: [DONE]\n\n"


@pytest.mark.parametrize("azure", [False, True], ids=["openai", "azure"])
def test_a_run_of_canonical_chunks_is_read_whole(azure: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    fragments = _fragments(60)
    data = openai_stream([_args(f, obfuscation="xYz9Qw"[: i % 7], azure=azure) for i, f in enumerate(fragments)], azure)
    found = [item for item in _runs_read(data, openai_chat.run_form) if item.kind == "run"]
    assert len(found) == 1 and found[0].fragments == fragments[1:]
    run: FrameRun = found[0]
    assert [tuple(f.pos) for f in run.frames()] == [
        tuple(run.triples()[i : i + 3]) for i in range(0, len(run.triples()), 3)
    ]
    report = _same_both_ways("t.sse", monkeypatch, data)
    assert report[0]["calls"][0]["arguments"] == orjson.loads("".join(fragments))


OPENAI_NEAR_MISSES = {
    "another tool index": _args("x", index=1),
    "an id on the call": _chunk({"tool_calls": [{"index": 0, "id": "call_Runs", "function": {"arguments": "x"}}]}),
    "a name on the function": _chunk(
        {"tool_calls": [{"index": 0, "function": {"name": "write_file", "arguments": "x"}}]}
    ),
    "a finish reason": _chunk({"tool_calls": [{"index": 0, "function": {"arguments": "x"}}]}, "tool_calls"),
    "content beside the call": _chunk({"content": "hi", "tool_calls": [{"index": 0, "function": {"arguments": "x"}}]}),
    "an undocumented field": _args("x").replace(b'"usage":null', b'"usage":null,"surprise":1'),
    "another id": _args("x").replace(b"chatcmpl-CRuns", b"chatcmpl-Other"),
    "no obfuscation": _args("x", obfuscation=None),
    "obfuscation with an escape": _args("x").replace(b'"obfuscation":"xYz"', b'"obfuscation":"x\\\\z"'),
    "obfuscation not UTF-8": _args("x").replace(b'"obfuscation":"xYz"', b'"obfuscation":"x\xc3z"'),
    "the fragment twice": _args("x").replace(b'"arguments":"x"', b'"arguments":"x","arguments":"y"'),
    "choices twice": _args("x").replace(b'"usage":null', b'"choices":[]'),
    "arguments not a string": _chunk({"tool_calls": [{"index": 0, "function": {"arguments": {"a": 1}}}]}),
    "whitespace": _args("x").replace(b'"usage":null', b'"usage": null'),
    "a second choice": _args("x").replace(b'"finish_reason":null}]', b'"finish_reason":null},{"index":1,"delta":{}}]'),
    "invalid UTF-8": _args("caf\u00e9").replace("é".encode(), b"\xc3"),
    "a bad escape": _args("x").replace(b'"arguments":"x"', b'"arguments":"\\q"'),
    "an event line": b"event: chunk\n" + _args("x"),
    "the usage chunk": b"data: " + orjson.dumps({**HEAD, "choices": [], "usage": {"total_tokens": 1}}) + b"\n\n",
}


@pytest.mark.parametrize("case", sorted(OPENAI_NEAR_MISSES))
def test_an_openai_near_miss_is_read_as_without_runs(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fragments = _fragments(40)
    chunks = [_args(f, obfuscation="xYz9Qw"[: i % 7]) for i, f in enumerate(fragments)]
    chunks.insert(20, OPENAI_NEAR_MISSES[case])
    data = openai_stream(chunks)
    odd = data.index(b"".join(chunks[20:22]))
    taken = [item for item in _runs_read(data, openai_chat.run_form) if item.kind == "run"]
    assert taken or case == "invalid UTF-8"
    for run in taken:
        assert not run.triples()[2] <= odd <= run.triples()[-1]
    _same_both_ways("t.sse", monkeypatch, data)
    _same_both_ways("t.sse", monkeypatch, data[:-20])  # and cut before its end


def test_more_calls_than_templates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``runs.MAX_TEMPLATES`` distinct run heads (a call's index is in its head), the rest of the
    capture is read frame by frame, and the report is the same as without runs."""
    deltas = []
    for index in range(runs.MAX_TEMPLATES + 10):
        start = {"type": "tool_use", "id": f"toolu_{index}", "name": "w", "input": {}}
        deltas.append(_event({"type": "content_block_start", "index": index + 1, "content_block": start}))
        deltas += [_delta(f, index=index + 1) for f in _fragments(6)]
        deltas.append(_event({"type": "content_block_stop", "index": index + 1}))
    data = anthropic_stream(deltas)
    found = [item for item in _runs_read(data, anthropic.run_form) if item.kind == "run"]
    assert len(found) == runs.MAX_TEMPLATES
    _same_both_ways("t.sse", monkeypatch, data)


# -- Positions computed when a finding reads them ---------------------------------------------------


def _escaped(fragment: str, escape: str) -> bytes:
    """A delta whose literal is valid JSON for ``fragment`` but not the bytes orjson writes for it (or
    that is, with padding in its free group)."""
    if escape == "padding":
        return _delta(fragment, padding=2)
    literal = orjson.dumps(fragment)
    if escape == "ensure_ascii":  # Python's json.dumps default: \\u00e9 for é
        literal = json.dumps(fragment).encode()
    else:  # a solidus escaped, as some writers do
        literal = literal.replace(b"/", b"\\/")
    return _delta("\x00").replace(b'"\\u0000"', literal)


def test_a_canonical_run_keeps_its_positions_to_compute(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose literals are the ones orjson writes holds no position until one is read; read, they
    are the frames' own, and the replay (every call's positions included) is the same as without runs."""
    fragments = [f"{f}/é€" for f in _fragments(50)]
    data = anthropic_stream([_delta(f) for f in fragments])
    (run,) = [item for item in _runs_read(data, anthropic.run_form) if item.kind == "run"]
    assert run.positions.lazy and len(run.positions) == 0  # nothing computed while reading
    assert [tuple(f.pos) for f in run.frames()] == [tuple(run.triples()[i : i + 3]) for i in range(0, 3 * len(run), 3)]
    assert run.pos == run.frames()[-1].pos
    _same_both_ways("t.sse", monkeypatch, data)


@pytest.mark.parametrize("escape", ["ensure_ascii", "solidus", "padding"])
def test_a_run_written_another_way_takes_its_offsets_as_read(escape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Near miss: one event in the run is valid but longer than its fragment's canonical literal (a
    literal not orjson's bytes, or padding), so the offsets are taken from the bytes, and are the frames'."""
    fragments = [f"{f}/é€" for f in _fragments(50)]
    deltas = [_delta(f) for f in fragments]
    deltas[20] = _escaped(fragments[20], escape)
    data = anthropic_stream(deltas)
    (run,) = [item for item in _runs_read(data, anthropic.run_form) if item.kind == "run"]
    assert not run.positions.lazy and len(run.positions) == 3 * len(run)
    assert run.fragments == fragments[1:]
    assert [tuple(f.pos) for f in run.frames()] == [tuple(run.triples()[i : i + 3]) for i in range(0, 3 * len(run), 3)]
    _same_both_ways("t.sse", monkeypatch, data)


def test_computed_positions_survive_the_spill_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call whose text goes to the argument store's file keeps its runs as runs, and reads back the
    positions the replay without runs gives."""
    monkeypatch.setattr(spill, "SPILL_THRESHOLD", 0)
    fragments = _fragments(80)
    deltas = [_delta(f) for f in fragments]
    deltas[40:40] = [_event({"type": "ping"})]  # two runs of one call, a frame read alone between them
    data = anthropic_stream(deltas)
    with_runs = replay("t.sse", Options(provider="anthropic"), data)
    assert with_runs.stream.calls[0].stored.store.spilled
    monkeypatch.setattr(runs, "ENABLED", False)
    without = replay("t.sse", Options(provider="anthropic"), data)
    assert with_runs.stream.calls[0].fragment_positions == without.stream.calls[0].fragment_positions
    assert len(with_runs.stream.calls[0].fragment_positions) == len(fragments)
