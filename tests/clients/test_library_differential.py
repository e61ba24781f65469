"""Each profile that models a Python library agrees with the real library, at its pinned version, on
the ORIGINAL response bytes: what it hands the tool (input or argument text), at which event, and
the class of the exception it raises.

``test_library_agreement.py`` feeds the libraries frames that stream-doctor wrote back as SSE, so the
capture's own framing never reached them. Here the mock transport returns the bytes as the server
sent them (``clients.library.Original``), cut one frame at a time (positions compared) and at
arbitrary byte offsets (positions not compared: a chunk may hold several frames). Inputs:

- every SSE fixture of the profile's provider, and every raw SSE capture in ``../shared/corpus``
  (skipped, with the reason, when the corpus is absent);
- generated Anthropic and Chat Completions streams (hypothesis): the last event with or without
  its closing blank line, ``event:`` lines present or not, a ``content_block_delta`` without
  ``index``, fragments without ``index`` after the first, indices reused or interleaved, a call
  without ``type`` or ``id``, no role chunk, whitespace and empty arguments, several index-less
  calls in one chunk;
- ``SAVED``: each disagreement the generated inputs found, kept as an explicit case.

CI runs a bounded number of examples (``STREAM_DOCTOR_DIFF_EXAMPLES``, default 25 per provider).
A long run: ``STREAM_DOCTOR_DIFF_EXAMPLES=2000 pytest tests/clients/test_library_differential.py -p
no:cacheprovider`` (add ``--hypothesis-show-statistics`` to see the shapes drawn).
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from stream_doctor.api import replay
from stream_doctor.capture import CaptureError, load
from stream_doctor.clients import BY_NAME, run
from stream_doctor.clients.library import LIBRARIES, LibraryMissing, Original, Outcome, Seen, outcome_of
from stream_doctor.clients.library import load as load_library

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
CORPUS = ROOT.parent / "shared" / "corpus"
EXAMPLES = int(os.environ.get("STREAM_DOCTOR_DIFF_EXAMPLES", "25"))
#: (client, capture name) where the profile is known to follow the library only in part, and why
_JOINED = (
    "data lines without blank lines: by the SSE rules one event whose joined data is not JSON, so every "
    "library raises at the end; the neutral events a profile reads do not carry the framing (the capture's "
    "data-lines-not-separated finding says it)"
)
KNOWN_DIVERGENCES: dict[tuple[str, str], str] = {
    (client, "openai/data_lines_without_blank_lines.sse"): _JOINED
    for name in (
        "openai/data_lines_without_blank_lines.sse",
        "openai-php-client/tests/Fixtures/Streams/ChatCompletionCreate.txt",
    )
    for client in ("langchain", "litellm", "openai-python", "pydantic-ai")
}
KNOWN_DIVERGENCES.update(
    {
        (client, "openai-php-client/tests/Fixtures/Streams/ChatCompletionCreate.txt"): _JOINED
        for client in ("langchain", "litellm", "openai-python", "pydantic-ai")
    }
)
# an event whose data is not JSON: the OpenAI SDK's decoder raises, which these profiles do not model yet
KNOWN_DIVERGENCES.update(
    {
        (
            client,
            "semantic-kernel/dotnet/src/Connectors/Connectors.OpenAI.UnitTests/TestData/"
            "chat_completion_invalid_streaming_test_response.txt",
        ): "data that is not JSON: the library raises"
        for client in ("langchain", "litellm", "pydantic-ai")
    }
)


def _library(client: str) -> Any:
    try:
        return load_library(client)
    except LibraryMissing as missing:  # pragma: no cover - the test extra installs them
        pytest.skip(str(missing))


def _clients(provider: str) -> list[str]:
    return [name for name in sorted(LIBRARIES) if BY_NAME[name].applies_to(provider)]


def _without_positions(outcome: Outcome) -> Outcome:
    return Outcome(tuple(Seen(None, s.call_id, s.name, s.value) for s in outcome.seen), outcome.error, None)


def compare(data: bytes, name: str, clients: list[str] | None = None, cuts: tuple[int, ...] | None = None) -> list[str]:
    """Every disagreement between a profile and its library on ``data``, as a sentence each."""
    report = replay(data, keep_events=True, name=name)
    provider = report.stream.capture.provider
    capture = load(name, None, data)
    events = [event for _, event in report.events]
    named = [frame.event is not None for frame, _ in report.events]  # as --client's live run is fed
    cut_last = not capture.ended_cleanly
    found = []
    for client in clients if clients is not None else _clients(provider):
        if not BY_NAME[client].applies_to(provider):
            continue
        library = _library(client)
        predicted = outcome_of(*run(BY_NAME[client], events, provider, named, cut_last), client)
        actual = library(capture, capture.frames, Original(data))
        if actual != predicted:
            found.append(f"{client} by frame: profile {predicted} / library {actual}")
        if cuts is not None:
            cut = library(capture, capture.frames, Original(data, cuts))
            if _without_positions(cut) != _without_positions(predicted):
                found.append(f"{client} cut at {cuts}: profile {predicted} / library {cut}")
    return found


# -- fixtures and corpus ------------------------------------------------------------------------


def _captures() -> list[Path]:
    paths = sorted((FIXTURES / "anthropic").glob("*.sse")) + sorted((FIXTURES / "openai").glob("*.sse"))
    if CORPUS.is_dir():
        for path in sorted(CORPUS.rglob("*")):
            if not path.is_file() or path.name == "README.md":
                continue
            try:
                if load(str(path)).container == "sse":
                    paths.append(path)
            except CaptureError:
                continue
    return paths


def _name(path: Path) -> str:
    return str(path.relative_to(CORPUS if CORPUS in path.parents else FIXTURES))


@pytest.mark.parametrize("path", _captures(), ids=_name)
def test_profiles_agree_on_the_original_bytes(path: Path) -> None:
    data = path.read_bytes()
    known = {client: why for (client, name), why in KNOWN_DIVERGENCES.items() if name == _name(path)}
    # one arbitrary split as well, the same for every run (seeded by the file name)
    rng = random.Random(_name(path))
    cuts = tuple(sorted(rng.sample(range(1, len(data)), min(len(data) - 1, 12)))) if len(data) > 1 else ()
    report = replay(data, keep_events=True, name=str(path))
    clients = [c for c in _clients(report.stream.capture.provider) if c not in known]
    if not clients and not known:
        pytest.skip(f"no Python library profile reads {report.stream.capture.provider!r}")
    assert compare(data, str(path), clients, cuts) == []
    for client, why in known.items():
        assert compare(data, str(path), [client]), f"fixed? remove it from KNOWN_DIVERGENCES: {why}"


def test_the_corpus_is_there_or_said_missing() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} is absent: only the project's fixtures were compared")
    assert any(CORPUS in p.parents for p in _captures())


# -- generated streams --------------------------------------------------------------------------


def _sse(events: list[tuple[str | None, bytes]], names: bool, closed: bool, eol: bytes) -> bytes:
    """SSE text: each event's ``event:`` line (when ``names``), its data line and a blank line; the
    last blank line left out unless ``closed``."""
    out = []
    for name, payload in events:
        head = b"event: " + name.encode() + eol if names and name else b""
        out.append(head + b"data: " + payload + eol)
    return eol.join(out) + (eol if closed else b"")


def _fragments(draw: Any, text: str) -> list[str]:
    if not text:
        return [text]
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=3)))
    bounds = [0, *[c for c in cuts if c < len(text)], len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


ARGUMENTS = st.sampled_from(['{"city":"Paris"}', '{"q":"a b","n":2}', "{}", "", " ", '{"a":[1,2]}', '{"x": "y"'])


@st.composite
def anthropic_streams(draw: Any) -> tuple[set[str], bytes]:
    shapes: set[str] = set()
    events: list[tuple[str | None, dict[str, Any]]] = []
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "content": []}
    # what every Anthropic message_start carries (pydantic-ai reads its usage)
    message.update({"stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})
    events.append(("message_start", {"type": "message_start", "message": message}))
    calls = draw(st.integers(1, 3))
    index_of = draw(st.sampled_from(["dense", "reused", "skipped"]))
    for i in range(calls):
        index = {"dense": i, "reused": 0, "skipped": i * 2}[index_of]
        block: dict[str, Any] = {"type": "tool_use", "name": f"tool_{i}", "input": {}}
        if draw(st.booleans()) or i:
            block["id"] = f"toolu_{i}"
        if draw(st.integers(0, 5)) == 0:
            block["input"] = {"start": True}
            shapes.add("start input with deltas")
            if index_of == "reused" and i:
                shapes.add("start input on a reused index")
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": block}))
        for fragment in _fragments(draw, draw(ARGUMENTS)):
            delta: dict[str, Any] = {"type": "content_block_delta", "index": index}
            delta["delta"] = {"type": "input_json_delta", "partial_json": fragment}
            if draw(st.integers(0, 7)) == 0:
                del delta["index"]
                shapes.add("content_block_delta without index")
            events.append(("content_block_delta", delta))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = draw(st.sampled_from(["tool_use", "end_turn", "max_tokens"]))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {}}))
    if draw(st.booleans()):
        events.append(("message_stop", {"type": "message_stop"}))
    names = draw(st.integers(0, 4)) > 0
    return shapes, _sse(
        [(n, orjson.dumps(v)) for n, v in events], names, draw(st.booleans()), draw(st.sampled_from([b"\n", b"\r\n"]))
    )


@st.composite
def chat_streams(draw: Any, mistral: bool = False) -> tuple[set[str], bytes]:
    """A Chat Completions stream; ``mistral``: as Mistral sends one (32-hex chunk ids, a Mistral model,
    calls usually whole in one chunk with no ``index`` and no ``type``, the finish in that chunk)."""
    chunk_id, model = (
        ("0123456789abcdef0123456789abcdef", "mistral-small-latest") if mistral else ("chatcmpl-1", "gpt-4o")
    )

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = {"id": chunk_id, "object": "chat.completion.chunk", "created": 1, "model": model}
        body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
        return orjson.dumps(body)

    chunks: list[bytes] = []
    if draw(st.integers(0, 4)) > 0:
        chunks.append(chunk({"role": "assistant", "content": None if not mistral else ""}))
    calls = draw(st.integers(1, 3))
    layouts = ["one_chunk", "one_chunk", "sequential"] if mistral else ["sequential", "interleaved", "one_chunk"]
    layout = draw(st.sampled_from(layouts))
    index_rule = draw(
        st.sampled_from(["never", "always"] if mistral else ["always", "first_only", "never", "all_zero"])
    )
    shapes = {"fragments without index"} if index_rule in ("first_only", "never") else set()
    if mistral:
        shapes.add("mistral")
    if calls > 1 and layout == "one_chunk" and index_rule == "never":
        shapes.add("several index-less calls in one chunk")
    pieces: list[list[dict[str, Any]]] = []
    for i in range(calls):
        head: dict[str, Any] = {"function": {"name": f"tool_{i}", "arguments": ""}}
        if draw(st.integers(0, 5)) > 0:
            head["id"] = f"call_{i}"
        if draw(st.integers(0, 5 if not mistral else 1)) > 0:
            head["type"] = "function"
        else:
            shapes.add("call without type")
        fragments = [{"function": {"arguments": f}} for f in _fragments(draw, draw(ARGUMENTS))]
        entries = [head, *fragments]
        for n, entry in enumerate(entries):
            if index_rule == "always" or (index_rule == "first_only" and n == 0):
                entry["index"] = i
            elif index_rule == "all_zero":
                entry["index"] = 0
        pieces.append(entries)
    if layout == "one_chunk":
        whole = []
        for entries in pieces:
            merged = dict(entries[0])
            merged["function"] = {
                "name": entries[0]["function"]["name"],
                "arguments": "".join(e["function"]["arguments"] for e in entries),
            }
            whole.append(merged)
        chunks.append(chunk({"tool_calls": whole}))
    elif layout == "interleaved":
        longest = max(len(p) for p in pieces)
        for n in range(longest):
            for entries in pieces:
                if n < len(entries):
                    chunks.append(chunk({"tool_calls": [entries[n]]}))
    else:
        for entries in pieces:
            chunks.extend(chunk({"tool_calls": [e]}) for e in entries)
    finish = draw(st.sampled_from(["tool_calls", "stop", "length"])) if draw(st.integers(0, 5)) > 0 else None
    if finish is not None and mistral and layout == "one_chunk" and draw(st.booleans()):
        # Mistral: the finish_reason in the chunk that carries the whole calls
        chunks[-1] = orjson.dumps(
            {
                **orjson.loads(chunks[-1]),
                "choices": [{**orjson.loads(chunks[-1])["choices"][0], "finish_reason": finish}],
            }
        )
    elif finish is not None:
        chunks.append(chunk({}, finish))
    if draw(st.booleans()):
        chunks.append(b"[DONE]")
    return shapes, _sse([(None, c) for c in chunks], False, draw(st.booleans()), b"\n")


def _cuts(draw: Any, data: bytes) -> tuple[int, ...]:
    return tuple(draw(st.lists(st.integers(1, max(1, len(data) - 1)), max_size=8)))


GENERATED = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES <= 100,  # CI draws the same examples every run; a long run explores
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


#: (shape, client) whose disagreement is found and cannot be fixed in the profile: the neutral events
#: the profile reads do not carry the fact the library acts on. An example holding one is counted
#: (``--hypothesis-show-statistics``), not failed, for that client only; every other client is asserted.
UNFIXED: dict[tuple[str, str], str] = {
    # found, not yet fixed: pydantic-ai's Anthropic stream hands a content_block_start to handle_part,
    # which overwrites the part of a reused vendor id; the profile appends the name (block_index_reused
    # and spliced_retry_stream fixtures agree with the profile, so the overwrite rule is narrower)
    ("start input on a reused index", "pydantic-ai"): "the library raises UnexpectedModelBehavior at the block",
}


def _check(data: st.DataObject, shapes: set[str], stream: bytes) -> None:
    found = compare(stream, "generated.sse", cuts=_cuts(data.draw, stream))
    for shape in sorted(shapes):
        event(f"shape: {shape}")
    known = {client for shape, client in UNFIXED if shape in shapes}
    unfixed = [line for line in found if line.split(" ", 1)[0] in known]
    for line in unfixed:
        event(f"known disagreement: {line.split(' ', 1)[0]}")
    assert [line for line in found if line not in unfixed] == [], stream.decode()


@GENERATED
@given(st.data())
def test_profiles_agree_on_generated_anthropic_streams(data: st.DataObject) -> None:
    _check(data, *data.draw(anthropic_streams()))


@GENERATED
@given(st.data())
def test_profiles_agree_on_generated_chat_streams(data: st.DataObject) -> None:
    _check(data, *data.draw(chat_streams()))


@GENERATED
@given(st.data())
def test_profiles_agree_on_generated_mistral_streams(data: st.DataObject) -> None:
    shapes, stream = data.draw(chat_streams(mistral=True))
    assert replay(stream, name="generated.sse").stream.capture.provider in ("mistral", "openai")
    _check(data, shapes, stream)


# -- what the generated inputs found, kept --------------------------------------------------------

#: each disagreement found, as the bytes that showed it; the profile now follows the library
_MSG = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",'
    b'"model":"claude","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
)
_START = b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_0","name":"f","input":%s}}\n\n'
_DELTA = b'event: content_block_delta\ndata: {"type":"content_block_delta",%s"delta":{"type":"input_json_delta","partial_json":"%s"}}\n\n'
_STOP = b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'


def _chunk(tool_calls: str, chunk_id: str = "chatcmpl-1", model: str = "gpt-4o", finish: str = "null") -> bytes:
    return (
        f'data: {{"id":"{chunk_id}","object":"chat.completion.chunk","created":1,"model":"{model}",'
        f'"choices":[{{"index":0,"delta":{{"tool_calls":{tool_calls}}},"finish_reason":{finish}}}]}}\n\n'
    ).encode()


_ROLE = b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}\n\n'
_FINISH = b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'
_MISTRAL = ("0123456789abcdef0123456789abcdef", "mistral-small-latest")
SAVED: dict[str, bytes] = {
    # anthropic-python: accumulate_event reads content[None]: TypeError at the delta; langchain: the
    # call runs with "{" repaired to {} and "}" is a nameless invalid call; pydantic-ai: {} (latest part)
    "anthropic_delta_without_index": _MSG
    + _START % b"{}"
    + _DELTA % (b'"index":0,', b"{")
    + _DELTA % (b"", b"}")
    + _STOP,
    # the whole input in an index-less delta: langchain runs {} and a nameless {"a":1}; pydantic-ai {"a":1}
    "anthropic_whole_input_without_index": _MSG + _START % b"{}" + _DELTA % (b"", b'{\\"a\\":1}') + _STOP,
    # pydantic-ai: an empty text delta on the start event's dict input raises UnexpectedModelBehavior
    "anthropic_start_input_then_empty_delta": _MSG + _START % b'{"a":1}' + _DELTA % (b'"index":0,', b"") + _STOP,
    # openai-python: an index-less fragment after an indexed one: RuntimeError in accumulate_delta
    "chat_fragment_without_index": _ROLE
    + _chunk('[{"index":0,"id":"call_0","type":"function","function":{"name":"f","arguments":""}}]')
    + _chunk('[{"function":{"arguments":"{}"}}]')
    + b"data: [DONE]\n\n",
    # openai-python: a first tool_calls list with no index is taken whole: TypeError in _build_events
    "chat_first_call_without_index": _ROLE
    + _chunk('[{"id":"call_0","type":"function","function":{"name":"f","arguments":"{}"}}]')
    + b"data: [DONE]\n\n",
    # litellm: Delta numbers the index-less calls of one chunk 0 and 1: both run
    "mistral_two_calls_in_one_chunk": _chunk(
        '[{"id":"call_0","type":"function","function":{"name":"f","arguments":"{}"}},'
        '{"id":"call_1","type":"function","function":{"name":"g","arguments":"{}"}}]',
        *_MISTRAL,
        finish='"tool_calls"',
    )
    + b"data: [DONE]\n\n",
    # openai-python: a call without type gets no arguments.done, so nothing runs (the others run it)
    "chat_call_without_type": _ROLE
    + _chunk('[{"index":0,"id":"call_0","function":{"name":"f","arguments":"{}"}}]')
    + _FINISH
    + b"data: [DONE]\n\n",
    # pydantic-ai: no chunk is ever dispatched (the only event is unterminated): UnexpectedModelBehavior;
    # openai-python: no snapshot, AssertionError
    "mistral_single_unterminated_chunk": _chunk(
        '[{"id":"call_0","type":"function","function":{"name":"f","arguments":"{}"}}]', *_MISTRAL
    )[:-1],
}


#: the clients a saved example is checked for, when not every one (the others' disagreement is in UNFIXED)
SAVED_FOR: dict[str, list[str]] = {}


@pytest.mark.parametrize("name", sorted(SAVED))
def test_saved_disagreements_stay_fixed(name: str) -> None:
    assert compare(SAVED[name], f"{name}.sse", SAVED_FOR.get(name)) == []
