"""The inputs of the differential tests (``test_library_differential.py`` feeds them to the real Python
libraries, ``test_node_differential.py`` to the TypeScript ones through the Node harness), one definition
for both:

- every SSE fixture of a profile's provider, and every raw SSE capture in ``../shared/corpus``
  (``sse_captures``; skipped, with the reason, when the corpus is absent);
- every SSE response body inside a container, in the fixtures and the corpus (HAR entries, VCR
  cassettes of every dialect, nock and Polly recordings, ``{status, headers, body}`` wrappers,
  a gzipped cassette): the body as the HTTP client receives it, decoded as the reader decodes it
  (``load(..., bodies=True)``), compared with the profiles on that interaction's events of the
  same replay (``fed_bodies``, ``container_cases``). A capture whose frames are parsed chunks (JSON
  Lines, an envelope, a recording of SDK chunk objects) holds no response bytes: it is skipped with
  that reason;
- generated Anthropic, Chat Completions and Mistral-shaped streams (``anthropic_streams``,
  ``chat_streams``): each strategy draws one stream's original bytes and the set of shapes it holds
  (the names the tests count, and that ``UNFIXED`` lists are keyed by): the last event with or without
  its closing blank line, ``event:`` lines present or not, a ``content_block_delta`` without ``index``,
  fragments without ``index`` after the first, indices reused or interleaved, a call without ``type``
  or ``id``, no role chunk, whitespace and empty arguments, start inputs with deltas, several
  index-less calls in one chunk, fields of the wrong type (Chat ``index`` a string, ``arguments`` null
  or an object, ``name`` null, ``id`` a number; Anthropic ``index`` a string, ``partial_json`` null or
  a number, ``input`` a list), Chat events named ``chunk`` or ``message``, what compatible servers add
  (a first chunk and a usage chunk with ``choices: []``, ``finish_reason: "stop"`` on a call), and
  framings each library's SSE decoder reads its own way (a ``[DONE] `` with a trailing space, Azure's
  content-filter event after the finish, events written without blank lines between them); the event
  types each provider documents (Anthropic ``ping``, ``error``, text and thinking blocks before, between
  or after the calls; Chat text before the calls, an error chunk by type or as ``event: error``) and the
  cardinality of the lists (a second choice in chunks of its own or in the first choice's; calls per
  chunk; content blocks). Every stream is written by ``grammar.py`` over the whole WHATWG event-stream
  grammar (line ends, a BOM, comments, ``id``/``retry``/unknown fields, blank-line runs, data over
  several lines) with JSON spelled as each library's parser reads it, what orjson refuses included.

Each test module adds ``SAVED``: each disagreement the generated inputs found, kept as an explicit case;
its ``UNFIXED`` lists, with the library's source line, each (shape, client) a profile does not model.
A profile known to follow its library only in part on a capture is listed, with why, in the module's
``KNOWN_DIVERGENCES`` (a bare stream) or ``CONTAINER_DIVERGENCES`` (a body in a container); the test
asserts each listed pair still disagrees, so a fix shows."""

from __future__ import annotations

import functools
import os
import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable

import orjson
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.api import replay
from stream_doctor.capture import Body, Capture, CaptureError, load
from stream_doctor.clients.framing import Framing, framing_of
from stream_doctor.clients.library import body_capture
from stream_doctor.values.events import Event
from tests.clients import grammar
from tests.conftest import CORPUS, FIXTURES, corpus_files, fixture_files

#: examples per generated test: CI runs a bounded number; a long run sets the variable
EXAMPLES = int(os.environ.get("STREAM_DOCTOR_DIFF_EXAMPLES", "25"))


def _fragments(draw: Any, text: str) -> list[str]:
    if not text:
        return [text]
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=3)))
    bounds = [0, *[c for c in cuts if c < len(text)], len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


ARGUMENTS = st.sampled_from(['{"city":"Paris"}', '{"q":"a b","n":2}', "{}", "", " ", '{"a":[1,2]}', '{"x": "y"'])


#: the error event Anthropic documents mid-stream (https://docs.anthropic.com/en/api/streaming#error-events)
_ANTHROPIC_ERROR = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


@st.composite
def anthropic_streams(draw: Any) -> tuple[set[str], bytes]:
    shapes: set[str] = set()
    events: list[tuple[str | None, dict[str, Any]]] = []
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "content": []}
    # what every Anthropic message_start carries (pydantic-ai reads its usage)
    message.update({"stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})
    events.append(("message_start", {"type": "message_start", "message": message}))
    if draw(st.integers(0, 3)) == 0:
        shapes.add("ping event")
        events.append(("ping", {"type": "ping"}))
    calls = draw(st.integers(1, 3))
    index_of = draw(st.sampled_from(["dense", "reused", "skipped"]))
    blocks = _anthropic_blocks(draw, calls, shapes)
    for position, kind in enumerate(blocks):
        index = {"dense": position, "reused": 0, "skipped": position * 2}[index_of]
        if kind != "tool_use":
            events.extend(_anthropic_other_block(kind, index))
            continue
        i = blocks[:position].count("tool_use")
        block: dict[str, Any] = {"type": "tool_use", "name": f"tool_{i}", "input": {}}
        if draw(st.booleans()) or i:
            block["id"] = f"toolu_{i}"
        if draw(st.integers(0, 5)) == 0:
            block["input"] = {"start": True}
            shapes.add("start input with deltas")
            if index_of == "reused" and position:
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
    # usage.output_tokens as the API always sends it (the AI SDK's chunk schema requires the number)
    usage = {"output_tokens": 1}
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": usage}))
    if draw(st.booleans()):
        events.append(("message_stop", {"type": "message_stop"}))
    if draw(st.integers(0, 9)) == 0:
        shapes.add("error event")
        events.insert(draw(st.integers(1, len(events))), ("error", _ANTHROPIC_ERROR))
    names = draw(st.integers(0, 4)) > 0
    closed = draw(st.booleans())
    _anthropic_wrong_type(draw, [v for _, v in events], shapes)
    payloads = grammar.refused(draw, [grammar.payload(draw, v, shapes) for _, v in events], shapes, b'"input_tokens":1')
    named = [(n, p) for (n, _), p in zip(events, payloads, strict=True)]
    return shapes, grammar.wire(draw, named, shapes, names=names, closed=closed)


def _anthropic_blocks(draw: Any, calls: int, shapes: set[str]) -> list[str]:
    """The content blocks in order: the calls, with now and then a thinking block first and text blocks
    before, between or after them."""
    blocks = ["tool_use"] * calls
    if draw(st.integers(0, 2)) == 0:
        at = draw(st.integers(0, calls))
        shapes.add(
            "text block " + ("before the calls" if at == 0 else "after the calls" if at == calls else "between calls")
        )
        blocks.insert(at, "text")
    if draw(st.integers(0, 5)) == 0:
        shapes.add("thinking block")
        blocks.insert(0, "thinking")
    return blocks


def _anthropic_other_block(kind: str, index: int) -> list[tuple[str | None, dict[str, Any]]]:
    """A text or thinking block's events, as the API streams them."""
    if kind == "text":
        start, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": "Let me look."}]
    else:
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": "Hm."}, {"type": "signature_delta", "signature": "c2ln"}]
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
    ]
    events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def _anthropic_wrong_type(draw: Any, events: list[dict[str, Any]], shapes: set[str]) -> None:
    """One field of the wrong type, now and then: an ``index`` that is a string, a ``partial_json``
    null or a number, a start event's ``input`` that is a list."""
    if draw(st.integers(0, 3)) < 3:
        return
    kind = draw(st.sampled_from(["index a string", "partial_json null", "partial_json a number", "input a list"]))
    if kind == "input a list":
        targets = [e for e in events if e["type"] == "content_block_start"]
    elif kind == "index a string":
        targets = [e for e in events if e["type"].startswith("content_block") and "index" in e]
    else:
        targets = [e for e in events if e["type"] == "content_block_delta"]
    if not targets:
        return
    target = draw(st.sampled_from(targets))
    shapes.add(f"wrong type: {kind}")
    if kind == "input a list":
        target["content_block"]["input"] = []
    elif kind == "index a string":
        target["index"] = str(target["index"])
    else:
        target["delta"]["partial_json"] = None if kind == "partial_json null" else 1


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
    role = draw(st.integers(0, 4)) > 0
    if role:
        chunks.append(chunk({"role": "assistant", "content": None if not mistral else ""}))
    if draw(st.integers(0, 2)) == 0:
        chunks.append(chunk({"content": "Let me look."}))
    calls = draw(st.integers(1, 3))
    layouts = ["one_chunk", "one_chunk", "sequential"] if mistral else ["sequential", "interleaved", "one_chunk"]
    layout = draw(st.sampled_from(layouts))
    index_rule = draw(
        st.sampled_from(["never", "always"] if mistral else ["always", "first_only", "never", "all_zero"])
    )
    shapes = {"fragments without index"} if index_rule in ("first_only", "never") else set()
    if mistral:
        shapes.add("mistral")
    if b"Let me look." in b"".join(chunks):
        shapes.add("text before the calls")
    if not role:
        shapes.add("no role chunk")
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
    chunks = _second_choice(draw, chunks, shapes, finish)
    if draw(st.booleans()):
        chunks.append(b"[DONE]")
    closed = draw(st.booleans())
    chunks = _chat_wrong_type(draw, chunks, shapes)
    chunks = _compatible_server(draw, chunks, shapes, chunk_id, model)
    # some compatible servers name every event (``event: chunk``, ``event: message``)
    event_name = draw(st.sampled_from([None, None, None, "chunk", "message"]))
    if event_name is not None:
        shapes.add(f"chat events named {event_name}")
    separated = _chat_framing(draw, chunks, shapes, finish is not None)
    names = [event_name] * len(chunks)
    _chat_error(draw, chunks, names, shapes)
    spelled = [c if c.startswith(b"[DONE]") else grammar.payload(draw, orjson.loads(c), shapes) for c in chunks]
    if separated:  # unseparated, one line orjson refuses makes the lines one event that is no JSON at all
        # the first chunk with calls stays readable: a stream whose only chunk is refused tells no provider
        first_call = next((n for n, c in enumerate(spelled) if b'"tool_calls"' in c), None)
        spelled = grammar.refused(draw, spelled, shapes, b'"created":1', first_call)
    events = list(zip(names, spelled, strict=True))
    return shapes, grammar.wire(draw, events, shapes, names=True, closed=closed, separated=separated)


#: the error a Chat Completions stream carries in place of a chunk (openai-python ``Stream.__stream__``
#: raises APIError on ``data.get("error")``), sent by type alone or as an ``event: error``
_CHAT_ERROR = orjson.dumps({"error": {"message": "The server had an error", "type": "server_error", "code": None}})


def _chat_error(draw: Any, chunks: list[bytes], names: list[str | None], shapes: set[str]) -> None:
    """Now and then (in place) an error in place of a chunk before the end: by type, or by event name too."""
    if draw(st.integers(0, 11)) > 0:
        return
    at = draw(st.integers(0, len(chunks) - (chunks[-1:] == [b"[DONE]"])))
    by_name = draw(st.booleans())
    shapes.add("error chunk named error" if by_name else "error chunk")
    chunks.insert(at, _CHAT_ERROR)
    names.insert(at, "error" if by_name else names[0] if names else None)


def _second_choice(draw: Any, chunks: list[bytes], shapes: set[str], finish: str | None) -> list[bytes]:
    """Now and then a second choice (``n: 2``) with one whole call of its own: in chunks of its own, as
    OpenAI sends each choice, or in a chunk of the first choice's calls."""
    if draw(st.integers(0, 7)) > 0:
        return chunks
    holding = [n for n, c in enumerate(chunks) if b'"tool_calls":[' in c]
    head = orjson.loads(chunks[holding[0]])
    entry = {"index": 0, "id": "call_9", "type": "function", "function": {"name": "tool_9", "arguments": "{}"}}
    second = {"index": 1, "delta": {"role": "assistant", "tool_calls": [entry]}, "finish_reason": None}
    if draw(st.booleans()):
        shapes.add("a second choice in the first choice's chunk")
        at = draw(st.sampled_from(holding))
        body = orjson.loads(chunks[at])
        body["choices"].append(second)
        chunks = [*chunks[:at], orjson.dumps(body), *chunks[at + 1 :]]
    else:
        shapes.add("a second choice in chunks of its own")
        chunks = [*chunks, orjson.dumps({**head, "choices": [second]})]
    if finish is not None:
        chunks.append(orjson.dumps({**head, "choices": [{"index": 1, "delta": {}, "finish_reason": finish}]}))
        if finish == "length":
            shapes.add("a second choice finishing with length")
    return chunks


#: Azure's asynchronous content-filter event: its choice carries only the filter's results
_FILTER_EVENT = orjson.dumps(
    {
        "choices": [{"content_filter_results": {}, "finish_reason": None, "index": 0}],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
    }
)


def _chat_framing(draw: Any, chunks: list[bytes], shapes: set[str], finished: bool) -> bool:
    """What each library's own SSE decoder reads its way, now and then (in place): a ``[DONE] `` with a
    trailing space, Azure's filter event after the finish, the events written without blank lines between
    them (the return value: whether they are separated)."""
    if chunks and chunks[-1] == b"[DONE]" and draw(st.integers(0, 5)) == 0:
        shapes.add("[DONE] with a trailing space")
        chunks[-1] = b"[DONE] "
    if finished and draw(st.integers(0, 5)) == 0:
        shapes.add("filter event after the finish")
        done = chunks[-1].startswith(b"[DONE]")
        chunks[len(chunks) - done : len(chunks) - done] = [_FILTER_EVENT]
    if draw(st.integers(0, 7)) == 0:
        shapes.add("data lines without blank lines")
        return False
    return True


def _chat_wrong_type(draw: Any, chunks: list[bytes], shapes: set[str]) -> list[bytes]:
    """One ``tool_calls[]`` field of the wrong type, now and then: ``index`` a string, ``arguments``
    null or an object, ``name`` null, ``id`` a number."""
    if draw(st.integers(0, 3)) < 3:
        return chunks
    holding = [n for n, c in enumerate(chunks) if b'"tool_calls":[' in c]
    if not holding:
        return chunks
    at = draw(st.sampled_from(holding))
    body = orjson.loads(chunks[at])
    calls = body["choices"][0]["delta"]["tool_calls"]
    at_entry = draw(st.integers(0, len(calls) - 1))
    entry = calls[at_entry]
    kind = draw(
        st.sampled_from(["index a string", "arguments null", "arguments an object", "name null", "id a number"])
    )
    shapes.add(f"wrong type: {kind}")
    function = entry.setdefault("function", {})
    if kind == "index a string":
        if "index" not in entry and any("index" not in e for e in calls[:at_entry]):
            shapes.add("an index after index-less entries of one chunk")
        entry["index"] = str(entry.get("index", 0))
    elif kind == "arguments null":
        function["arguments"] = None
    elif kind == "arguments an object":
        function["arguments"] = {"a": 1}
    elif kind == "name null":
        function["name"] = None
    else:
        entry["id"] = 7
    return [*chunks[:at], orjson.dumps(body), *chunks[at + 1 :]]


def _compatible_server(draw: Any, chunks: list[bytes], shapes: set[str], chunk_id: str, model: str) -> list[bytes]:
    """What compatible servers add around a Chat stream, now and then: a first chunk with ``choices: []``
    (Azure's prompt filter results), a last usage chunk with ``choices: []`` (``stream_options``
    ``include_usage``; vLLM, Together, DeepSeek), Groq's ``x_groq`` usage."""
    head = {"id": chunk_id, "object": "chat.completion.chunk", "created": 1, "model": model, "choices": []}
    if draw(st.integers(0, 4)) == 0:
        shapes.add("first chunk with no choices")
        chunks = [orjson.dumps({**head, "prompt_filter_results": []}), *chunks]
    if draw(st.integers(0, 3)) == 0:
        shapes.add("usage chunk with no choices")
        usage = orjson.dumps({**head, "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        done = chunks[-1] == b"[DONE]"
        chunks = [*chunks[:-1], usage, chunks[-1]] if done else [*chunks, usage]
    return chunks


def byte_cuts(draw: Any, data: bytes) -> tuple[int, ...]:
    return tuple(draw(st.lists(st.integers(1, max(1, len(data) - 1)), max_size=8)))


GENERATED = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES <= 100,  # CI draws the same examples every run; a long run explores
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# -- captures ------------------------------------------------------------------------------------


def sse_captures(providers: Iterable[str]) -> list[Path]:
    """The SSE fixtures of ``providers`` and every raw SSE capture in ``CORPUS`` (none when it is absent)."""
    folders = set(providers)
    paths = fixture_files(*folders, suffixes=(".sse",)) if folders else []
    for path in corpus_files():
        try:
            if load(str(path)).container == "sse":
                paths.append(path)
        except CaptureError:
            continue
    return paths


def capture_name(path: Path) -> str:
    """A capture's name in test ids and the divergence tables: relative to the corpus or the fixtures."""
    return str(path.relative_to(CORPUS if CORPUS in path.parents else FIXTURES))


def seeded_cuts(path: Path, data: bytes) -> tuple[int, ...]:
    """One arbitrary split of ``data`` (up to 12 cuts), the same for every run: seeded by the capture's name."""
    rng = random.Random(capture_name(path))
    return tuple(sorted(rng.sample(range(1, len(data)), min(len(data) - 1, 12)))) if len(data) > 1 else ()


# -- one response body, as a library is fed it --------------------------------------------------


@dataclass(frozen=True)
class Fed:
    """One response body to feed a real library (``body.data``, the bytes its HTTP client receives),
    and the replay of the same capture that the profiles read: that interaction's events."""

    body: Body
    provider: str
    events: tuple[Event, ...]
    framings: tuple[Framing, ...]  # for each event: its frame's framing facts, as --client's live run is fed
    stream: AccumulatedStream

    @property
    def data(self) -> bytes:
        return self.body.data

    @property
    def cut_last(self) -> bool:
        return not self.body.ended_cleanly

    @property
    def capture(self) -> Capture:
        """What a library driver reads (``clients.library.body_capture``, as ``--client``'s run mode feeds it)."""
        return body_capture(self.body)


def fed_sse(data: bytes, name: str, provider: str | None = None) -> Fed:
    """A bare SSE capture (its bytes are the body) and its replay (``provider``: forced, for a body too short to tell)."""
    report = replay(data, keep_events=True, name=name, provider=provider)
    (body,) = load(name, None, data, bodies=True).bodies or [None]
    assert body is not None, f"{name} is no bare stream"
    events = tuple(event for _, event in report.events)
    framings = tuple(framing_of(frame) for frame, _ in report.events)
    return Fed(body, report.stream.capture.provider, events, framings, report.stream)


@functools.cache
def fed_bodies(path: Path) -> dict[int, Fed]:
    """Each SSE response body of a container capture (HAR, cassette, recording) by interaction, with
    that interaction's events from one replay of the whole file (its request record too, as ``--client``
    is fed them)."""
    report = replay(str(path), keep_events=True)
    bodies = {b.interaction: b for b in load(str(path), bodies=True).bodies or () if b.container == "sse"}
    fed = {}
    for turn in report.turns:
        body = bodies.get(turn.interaction) if turn.interaction is not None else None
        if body is None:
            continue
        kept = [(frame, event) for frame, event in report.events if frame.interaction == turn.interaction]
        events = tuple(event for _, event in kept)
        framings = tuple(framing_of(frame) for frame, _ in kept)
        fed[turn.interaction] = Fed(body, turn.stream.capture.provider, events, framings, turn.stream)
    return fed


#: a container whose frames are records of already-parsed chunks: no response bytes to feed a library
PARSED_CHUNKS = {
    "jsonl": "JSON Lines of parsed chunks (an SDK's or a logger's records), not the response bytes",
    "envelope": "stream-doctor's envelope: one record per parsed event, not the response bytes",
    "json": "a JSON array of parsed chunks (or a JSON array stream), not SSE bytes",
}


@dataclass(frozen=True)
class ContainerCase:
    """A fixture or corpus capture that is not a bare SSE file: one SSE body of it to feed (``interaction``),
    or a capture with no SSE body, skipped for ``skipped``."""

    path: Path
    interaction: int | None
    skipped: str | None = None

    @property
    def name(self) -> str:
        where = f"#{self.interaction}" if self.interaction is not None else ""
        return capture_name(self.path) + where


@functools.cache
def container_cases() -> tuple[ContainerCase, ...]:
    """Every fixture and corpus capture in a container: one case per SSE response body (a HAR entry, a
    cassette interaction, a recording's response), and one skipped case, with the reason, per capture
    whose frames are parsed chunks (JSON Lines, envelopes, recordings of SDK chunk objects). Bare
    streams are not here: ``sse_captures`` has the SSE ones; an event stream or prefixed lines no
    library profile reads. Which provider each is (and so which libraries read it) is the replay's."""
    cases = []
    for path in [*fixture_files(check_tree=True), *corpus_files()]:
        if path.suffix in (".md", ".toml"):
            continue
        try:
            capture = load(str(path), bodies=True)
        except CaptureError:
            continue
        sse = sorted(b.interaction for b in capture.bodies or () if b.container == "sse" and b.interaction)
        if capture.exchanges and sse:
            cases += [ContainerCase(path, number) for number in sse]
        elif capture.container in PARSED_CHUNKS:
            cases.append(ContainerCase(path, None, PARSED_CHUNKS[capture.container]))
        elif capture.exchanges and any(b.container in PARSED_CHUNKS for b in capture.bodies or ()):
            kinds = sorted({b.container for b in capture.bodies or ()})
            cases.append(ContainerCase(path, None, f"response bodies of parsed chunks ({', '.join(kinds)})"))
    return tuple(cases)


def written_back_framings(report: Any) -> list[Framing | None]:
    """The framing facts of a kept replay's frames as ``clients.library.sse_chunks`` writes them back for the
    agreement tests: each frame its own event with its data as read, so a sentinel as sent (``[DONE] ``)
    still reaches the library while lines written without blank lines no longer join (None: a JSON frame)."""
    framings: list[Framing | None] = []
    for frame, _ in report.events:
        framing = framing_of(frame)
        framings.append(replace(framing, joined=None) if framing.data is not None else None)
    return framings
