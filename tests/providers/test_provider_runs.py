"""Runs of fragment events read whole (capture/runs.py) for Gemini, Bedrock (JSON lines), the AI SDK
UI stream, OpenAI Responses and Cohere: the reader takes long runs of each provider's canonical
delta, and each near miss (one event in the middle that is not the canonical bytes, or that the
adapter's state does not let it take) leaves the replay exactly what it is without runs, findings,
fragments and positions included (``tests/capture/test_runs.py`` compares every fixture and
corpus capture both ways).
"""

from __future__ import annotations

from typing import Any, Callable

import orjson
import pytest

from stream_doctor.capture import runs
from stream_doctor.capture.base import Capture, Frame
from stream_doctor.capture.jsonl import stream_jsonl
from stream_doctor.capture.sse import stream_sse
from stream_doctor.providers import bedrock, cohere, gemini, openai_responses, vercel_ai
from tests.capture.test_runs import _same_both_ways


def _fragments(count: int) -> list[str]:
    text = orjson.dumps({"path": "a.py", "content": 'caf\u00e9 "quoted" path\\to\n\t\u20ac ' * (count // 3 + 1)})
    size = max(1, len(text) // count)
    decoded = text.decode()
    return [decoded[i : i + size] for i in range(0, len(decoded), size)]


def _taken(data: bytes, form: runs.RunForm, jsonl: bool = False) -> list[Any]:
    """The FrameRuns the reader makes of ``data`` with ``form`` said from the first byte."""
    reading = runs.RunReading()
    reading.form, reading.pending = form, False
    capture = Capture("t", "jsonl" if jsonl else "sse", len(data), [])
    read = (
        stream_jsonl(((data, 0, len(data), True),), capture, reading)
        if jsonl
        else stream_sse(((data, 0, len(data), True),), capture, runs=reading)
    )
    return [item for batch in read for item in batch if item.kind == "run"]


def _check(
    name: str,
    data: bytes,
    form: runs.RunForm,
    monkeypatch: pytest.MonkeyPatch,
    *,
    jsonl: bool = False,
    may_take_none: bool = False,
    whole: bool = False,
) -> Any:
    """The runs the reader takes stand for the frames it makes without them, and the replay is the same
    both ways; ``whole``: the adapter takes every run whole (never asks for its frames)."""
    taken = _taken(data, form, jsonl)
    assert taken or may_take_none
    for run in taken:  # what a run stands for is what the reader makes of those bytes without runs
        frames: list[Frame] = run.frames()
        assert [tuple(f.pos) for f in frames] == [
            tuple(run.triples()[i : i + 3]) for i in range(0, len(run.triples()), 3)
        ]
    if whole:
        monkeypatch.setattr(runs.FrameRun, "frames", lambda run: pytest.fail(f"{run!r} was read frame by frame"))
    return _same_both_ways(name, monkeypatch, data)


# -- Cohere (v2 chat stream) -----------------------------------------------------------------------


def _cohere_event(value: dict[str, Any], named: bool) -> bytes:
    line = b"data: " + orjson.dumps(value) + b"\n\n"
    return b"event: " + str(value["type"]).encode() + b"\n" + line if named else line


def _cohere_delta(fragment: str, index: int = 0, named: bool = False) -> bytes:
    value = {
        "type": "tool-call-delta",
        "index": index,
        "delta": {"message": {"tool_calls": {"function": {"arguments": fragment}}}},
    }
    return _cohere_event(value, named)


def cohere_stream(deltas: list[bytes], named: bool = False) -> bytes:
    start = {
        "type": "tool-call-start",
        "index": 0,
        "delta": {
            "message": {
                "tool_calls": {"id": "get_k2j8", "type": "function", "function": {"name": "f", "arguments": ""}}
            }
        },
    }
    head = [_cohere_event({"id": "5c1f", "type": "message-start", "delta": {"message": {"role": "assistant"}}}, named)]
    tail = [
        _cohere_event({"type": "tool-call-end", "index": 0}, named),
        _cohere_event({"type": "message-end", "delta": {"finish_reason": "TOOL_CALL"}}, named),
    ]
    return b"".join([*head, _cohere_event(start, named), *deltas, *tail])


COHERE_MISSES = {
    "fields in another order": b'data: {"index":0,"type":"tool-call-delta","delta":{"message":{"tool_calls":{"function":{"arguments":"x"}}}}}\n\n',
    "an extra field": b'data: {"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":"x","name":"g"}}}}}\n\n',
    "another index": _cohere_delta("x", index=1),
    "an index that is a float": b'data: {"type":"tool-call-delta","index":0.0,"delta":{"message":{"tool_calls":{"function":{"arguments":"x"}}}}}\n\n',
    "whitespace": b'data: {"type": "tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":"x"}}}}}\n\n',
    "an event line": _cohere_delta("x", named=True),
    "another event name": b"event: tool-call-end\n" + _cohere_delta("x"),
    "a bad escape": b'data: {"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":"a\\qb"}}}}}\n\n',
    "invalid UTF-8": b'data: {"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":"caf\xc3"}}}}}\n\n',
    "a done sentinel": b"data: [DONE]\n\n",
}


@pytest.mark.parametrize("named", [False, True], ids=["data-only", "named"])
@pytest.mark.parametrize("case", [None, *sorted(COHERE_MISSES)])
def test_cohere(case: str | None, named: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    deltas = [_cohere_delta(f, named=named) for f in _fragments(40)]
    if case is not None:
        deltas.insert(20, COHERE_MISSES[case])
    data = cohere_stream(deltas, named)
    _check("t.sse", data, cohere.run_form, monkeypatch, may_take_none=case == "invalid UTF-8", whole=case is None)


# -- Bedrock ConverseStream as JSON lines (boto3's events, the AI SDK's recordings) -------------------


def _bedrock_delta(fragment: str, index: int = 0, index_first: bool = True) -> bytes:
    body: dict[str, Any] = {"delta": {"toolUse": {"input": fragment}}}
    body = {"contentBlockIndex": index, **body} if index_first else {**body, "contentBlockIndex": index}
    return orjson.dumps({"contentBlockDelta": body}) + b"\n"


def bedrock_stream(deltas: list[bytes]) -> bytes:
    def line(value: dict[str, Any]) -> bytes:
        return orjson.dumps(value) + b"\n"

    start = {"contentBlockStart": {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}}}
    tail = [line({"contentBlockStop": {"contentBlockIndex": 0}}), line({"messageStop": {"stopReason": "tool_use"}})]
    return b"".join([line({"messageStart": {"role": "assistant"}}), line(start), *deltas, *tail])


BEDROCK_MISSES = {
    "the padding field p": b'{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":"a"}},"p":"abc"}}\n',
    "whitespace": b'{"contentBlockDelta": {"contentBlockIndex":0,"delta":{"toolUse":{"input":"a"}}}}\n',
    "an index that is a float": b'{"contentBlockDelta":{"contentBlockIndex":0.0,"delta":{"toolUse":{"input":"a"}}}}\n',
    "no index": b'{"contentBlockDelta":{"delta":{"toolUse":{"input":"a"}}}}\n',
    "the index twice": b'{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":"a"}},"contentBlockIndex":1}}\n',
    "an extra field": b'{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":"a","x":1}}}}\n',
    "input not a string": b'{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":{}}}}}\n',
    "another index": _bedrock_delta("a", 1),
    "the other key order": b"",  # made in the test: the order the others are not in
    "a lone surrogate": b'{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":"a\\ud800"}}}}\n',
    "not UTF-8": b'{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":"caf\xe9"}}}}\n',
    "a blank line": b"\n",
    "a CRLF line end": _bedrock_delta("a")[:-1] + b"\r\n",
    "a trailing space": _bedrock_delta("a")[:-1] + b" \n",
    "an appended execute record": b'{"sd":"execute","call_id":"t1","name":"f","input":{}}\n',
}


@pytest.mark.parametrize("index_first", [True, False], ids=["index-first", "delta-first"])
@pytest.mark.parametrize("case", [None, *sorted(BEDROCK_MISSES)])
def test_bedrock_json_lines(case: str | None, index_first: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    deltas = [_bedrock_delta(f, index_first=index_first) for f in _fragments(40)]
    if case is not None:
        odd_line = BEDROCK_MISSES[case] or _bedrock_delta("a", index_first=not index_first)
        deltas.insert(20, odd_line)
    data = bedrock_stream(deltas)
    odd = sum(map(len, [data[: data.index(deltas[0])], *deltas[:20]]))  # where the near miss starts
    taken = _taken(data, bedrock.run_form, jsonl=True)
    assert taken or case in ("not UTF-8", "a lone surrogate", "a CRLF line end")
    for run in taken if case is not None else ():  # the near miss is in no run
        assert not run.triples()[2] <= odd <= run.triples()[-1]
    _same_both_ways("t.jsonl", monkeypatch, data[:-3])  # cut inside its last line
    _check("t.jsonl", data, bedrock.run_form, monkeypatch, jsonl=True, may_take_none=True, whole=case is None)


# -- The AI SDK UI message stream --------------------------------------------------------------------


def _part(value: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(value) + b"\n\n"


def _ui_delta(fragment: str, call: str = "call_A") -> bytes:
    return _part({"type": "tool-input-delta", "toolCallId": call, "inputTextDelta": fragment})


def ui_stream(deltas: list[bytes], fragments: list[str]) -> bytes:
    head = [_part({"type": "start"}), _part({"type": "start-step"})]
    head += [_part({"type": "tool-input-start", "toolCallId": "call_A", "toolName": "f"})]
    done = {
        "type": "tool-input-available",
        "toolCallId": "call_A",
        "toolName": "f",
        "input": orjson.loads("".join(fragments)),
    }
    tail = [_part(done), _part({"type": "finish-step"}), _part({"type": "finish"}), b"data: [DONE]\n\n"]
    return b"".join([*head, *deltas, *tail])


UI_MISSES = {
    "fields in another order": b'data: {"toolCallId":"call_A","type":"tool-input-delta","inputTextDelta":"x"}\n\n',
    "an extra field": b'data: {"type":"tool-input-delta","toolCallId":"call_A","inputTextDelta":"x","dynamic":true}\n\n',
    "another call": _ui_delta("x", "call_B"),
    "an escaped call id": b'data: {"type":"tool-input-delta","toolCallId":"call_\\u0041","inputTextDelta":"x"}\n\n',
    "a text delta": _part({"type": "text-delta", "id": "t", "delta": "x"}),
    "an event line": b"event: message\n" + _ui_delta("x"),
    "a bad escape": b'data: {"type":"tool-input-delta","toolCallId":"call_A","inputTextDelta":"\\x"}\n\n',
}


@pytest.mark.parametrize("case", [None, *sorted(UI_MISSES)])
def test_vercel_ai_ui_stream(case: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    fragments = _fragments(40)
    deltas = [_ui_delta(f) for f in fragments]
    if case is not None:
        deltas.insert(20, UI_MISSES[case])
    _check("t.sse", ui_stream(deltas, fragments), vercel_ai.run_form, monkeypatch, whole=case is None)


# -- OpenAI Responses ---------------------------------------------------------------------------------


def responses_stream(fragments: list[str], change: Callable[[int, dict[str, Any]], dict[str, Any] | None]) -> bytes:
    """Responses events with sequence numbers; ``change(i, delta)`` may rewrite the i-th delta (None: drop it)."""
    out: list[bytes] = []

    def event(data: dict[str, Any]) -> None:
        out.append(b"event: " + str(data["type"]).encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n")

    item = {
        "id": "fc_A",
        "type": "function_call",
        "status": "in_progress",
        "arguments": "",
        "call_id": "call_A",
        "name": "f",
    }
    response = {"id": "resp_A", "object": "response", "status": "in_progress", "output": []}
    event({"type": "response.created", "sequence_number": 0, "response": response})
    event({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item})
    sequence = 2
    for i, fragment in enumerate(fragments):
        delta: dict[str, Any] = {
            "type": "response.function_call_arguments.delta",
            "sequence_number": sequence,
            "item_id": "fc_A",
            "output_index": 0,
            "delta": fragment,
            "obfuscation": "xYz9Qw"[: 1 + i % 6],
        }
        changed = change(i, delta)
        if changed is not None:
            event(changed)
        sequence += 1
    arguments = "".join(fragments)
    done = {
        "type": "response.function_call_arguments.done",
        "sequence_number": sequence,
        "item_id": "fc_A",
        "output_index": 0,
    }
    event({**done, "arguments": arguments})
    finished = {**item, "status": "completed", "arguments": arguments}
    event({"type": "response.output_item.done", "sequence_number": sequence + 1, "output_index": 0, "item": finished})
    return b"".join(out)


def _at(index: int, new: Callable[[dict[str, Any]], dict[str, Any] | None]) -> Callable[[int, dict[str, Any]], Any]:
    return lambda i, delta: new(delta) if i == index else delta


RESPONSES_MISSES: dict[str, Callable[[int, dict[str, Any]], Any]] = {
    "a sequence gap": _at(20, lambda d: None),
    "a sequence number repeated": lambda i, d: {**d, "sequence_number": d["sequence_number"] - (i >= 20)},
    "sequence numbers from a later run": lambda i, d: {**d, "sequence_number": d["sequence_number"] + 5 * (i >= 20)},
    "another item id": _at(20, lambda d: {**d, "item_id": "fc_B"}),
    "another output index": _at(20, lambda d: {**d, "output_index": 1}),
    "no obfuscation": _at(20, lambda d: {k: v for k, v in d.items() if k != "obfuscation"}),
    "no obfuscation from here on": lambda i, d: {k: v for k, v in d.items() if k != "obfuscation" or i < 20},
    "an SDK snapshot": _at(20, lambda d: {**d, "snapshot": "x"}),
    "an undocumented field": _at(20, lambda d: {**d, "logprobs": []}),
    "fields in another order": _at(20, lambda d: {"sequence_number": d["sequence_number"], **d}),
}


@pytest.mark.parametrize("case", [None, *sorted(RESPONSES_MISSES)])
def test_openai_responses(case: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    fragments = _fragments(40)
    change = RESPONSES_MISSES[case] if case is not None else lambda i, d: d
    _check("t.sse", responses_stream(fragments, change), openai_responses.run_form, monkeypatch, whole=case is None)


@pytest.mark.parametrize(
    "case",
    [
        None,
        "a gap just past 99",
        "a number repeated just past 99",
        "a number one past its place just before 99",
    ],
)
def test_openai_responses_sequence_across_digit_counts(case: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's sequence numbers are read in one parse (``run_fragments``): across 99 -> 100 they take one
    digit more, and a gap, a repeat or a swap there is seen as frame by frame sees it."""
    fragments = _fragments(130)
    changes: dict[str, Callable[[int, dict[str, Any]], Any]] = {
        "a gap just past 99": _at(99, lambda d: None),
        "a number repeated just past 99": _at(99, lambda d: {**d, "sequence_number": d["sequence_number"] - 1}),
        "a number one past its place just before 99": _at(
            96, lambda d: {**d, "sequence_number": d["sequence_number"] + 1}
        ),
    }
    change = changes[case] if case is not None else lambda i, d: d
    _check("t.sse", responses_stream(fragments, change), openai_responses.run_form, monkeypatch, whole=case is None)


# -- Gemini / Vertex AI streamed function-call arguments (CRLF, as Vertex sends them) ---------------


def gemini_stream(pieces: list[bytes], line_end: bytes = b"\r\n") -> bytes:
    return b"".join(pieces).replace(b"\n", line_end)


def _gemini_chunk(part: dict[str, Any], response: str = "RespA", created: str = "2026-05-12T09:14:27.518204Z") -> bytes:
    body = {
        "candidates": [{"content": {"role": "model", "parts": [part]}}],
        "usageMetadata": {"trafficType": "ON_DEMAND"},
        "modelVersion": "gemini-3.1-pro-preview",
        "createTime": created,
        "responseId": response,
    }
    return b"data: " + orjson.dumps(body) + b"\n\n"


def _gemini_piece(text: str, path: str = "$.content", more: bool = True, **chunk: str) -> bytes:
    piece: dict[str, Any] = {"jsonPath": path, "stringValue": text}
    if more:
        piece["willContinue"] = True
    return _gemini_chunk({"functionCall": {"partialArgs": [piece], "willContinue": True}}, **chunk)


def _gemini(middle: list[bytes]) -> list[bytes]:
    return [
        _gemini_chunk({"functionCall": {"name": "write_file", "willContinue": True}, "thoughtSignature": "c2ln"}),
        _gemini_piece("src/a.py", "$.path", more=False),
        *middle,
        _gemini_piece("", more=False),
        _gemini_chunk({"functionCall": {}}),
        b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP"}],"responseId":"RespA"}\n\n',
    ]


GEMINI_MISSES = {
    "another path": _gemini_piece("x", "$.other"),
    "the string ends": _gemini_piece("x", more=False),
    "an empty piece": _gemini_piece(""),
    "another response": _gemini_piece("x", response="RespB"),
    "another create time": _gemini_piece("x", created="2026-05-12T09:14:28.000000Z"),
    "a number piece": _gemini_chunk(
        {"functionCall": {"partialArgs": [{"jsonPath": "$.n", "numberValue": 1}], "willContinue": True}}
    ),
    "two pieces in one chunk": _gemini_chunk(
        {
            "functionCall": {
                "partialArgs": [
                    {"jsonPath": "$.content", "stringValue": "a", "willContinue": True},
                    {"jsonPath": "$.content", "stringValue": "b", "willContinue": True},
                ],
                "willContinue": True,
            }
        }
    ),
    "a finish reason": b'data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.content","stringValue":"x","willContinue":true}],"willContinue":true}}]},"finishReason":"MAX_TOKENS"}],"responseId":"RespA"}\n\n',
    "an undocumented field": _gemini_piece("x").replace(b'"responseId"', b'"extra":1,"responseId"'),
    "an escaped path": _gemini_piece("x", "$['a\"b']"),
    "a bad escape": _gemini_piece("x").replace(b'"stringValue":"x"', b'"stringValue":"\\x"'),
}


@pytest.mark.parametrize("line_end", [b"\r\n", b"\n"], ids=["crlf", "lf"])
@pytest.mark.parametrize("case", [None, *sorted(GEMINI_MISSES)])
def test_gemini_streamed_arguments(case: str | None, line_end: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    middle = [_gemini_piece(f) for f in _fragments(40)]
    if case is not None:
        middle.insert(20, GEMINI_MISSES[case])
    data = gemini_stream(_gemini(middle), line_end)
    _check("t.sse", data, gemini.run_form, monkeypatch, whole=case is None)
