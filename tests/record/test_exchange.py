"""Where each provider's stream ends, as the recorder sees it: the adapters' declared ``stream_end``
facts read through the recorder's own body parser, on the project's wire-exact captures."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from stream_doctor.record.exchange import RecordedExchange, stream_end
from stream_doctor.record.writer import EnvelopeWriter
from stream_doctor.values.protocol import StreamEnd

SSE, LINES = "text/event-stream", "application/x-ndjson"

#: (provider, capture, how it is served, the event after which nothing more is due: 1 = the last,
#: 2 = the one before it, None = no event ends it).
ENDS = [
    ("anthropic", "anthropic/one_call.sse", SSE, 1),  # message_stop
    ("anthropic", "anthropic/overloaded_error_mid_stream.sse", SSE, 1),  # an error event
    ("anthropic", "anthropic/stream_cut_mid_arguments.sse", SSE, None),
    ("openai", "openai/one_call.sse", SSE, 1),  # [DONE]
    ("openai", "openai/error_object_mid_stream.sse", SSE, 1),  # {"error": …}
    ("openai", "openai/no_done_after_finish.sse", SSE, None),  # a finish_reason is no end: [DONE] is
    ("openai", "openai/stream_cut_mid_arguments.sse", SSE, None),
    ("mistral", "mistral/one_call.sse", SSE, 1),
    ("mistral", "mistral/stream_cut_before_finish.sse", SSE, None),
    ("openai-responses", "openai-responses/one_call.sse", SSE, 1),  # response.completed
    ("openai-responses", "openai-responses/failed_mid_call.sse", SSE, 2),  # error, then response.failed
    ("openai-responses", "openai-responses/stream_cut.sse", SSE, None),
    ("gemini-interactions", "gemini/interactions_one_call.sse", SSE, 1),  # interaction.completed
    ("cohere", "cohere/parallel_calls.jsonl", LINES, 1),  # message-end
    ("cohere", "cohere/stream_cut_mid_call.jsonl", LINES, None),
    ("ollama", "ollama/one_call.jsonl", LINES, 1),  # "done": true
    ("ollama", "ollama/error_mid_stream.jsonl", LINES, 1),  # {"error": …}
    ("ollama", "ollama/stream_cut_before_done.jsonl", LINES, None),
    ("vercel-ai", "vercel-ai/parallel_client_calls.sse", SSE, 1),  # [DONE]
    ("vercel-ai", "vercel-ai/stream_cut_mid_call.sse", SSE, None),
    # Gemini: only the body's end ends a stream, even one whose chunks carry a finishReason
    ("gemini", "gemini/one_call.sse", SSE, None),
    ("gemini", "gemini/parallel_calls_with_ids.sse", SSE, None),
]


def finished_at(body: bytes, content_type: str, ending: StreamEnd) -> list[bool]:
    """Fed one byte at a time (the worst split), whether the exchange had its last event after each event."""
    exchange = RecordedExchange(EnvelopeWriter(io.BytesIO()), content_type, None, ending)
    seen: list[bool] = []
    for number in range(len(body)):
        before = exchange.events
        exchange.chunk(body[number : number + 1])
        seen += [exchange.finished] * (exchange.events - before)
    before = exchange.events
    exchange.end()
    return seen + [exchange.finished] * (exchange.events - before)


@pytest.mark.parametrize(("provider", "capture", "content_type", "last"), ENDS, ids=[c for _, c, _, _ in ENDS])
def test_each_provider_declares_the_event_that_ends_its_stream(
    provider: str, capture: str, content_type: str, last: int | None
) -> None:
    body = Path("fixtures", capture).read_bytes()
    seen = finished_at(body, content_type, stream_end(provider))
    expected = [False] * len(seen) if last is None else [False] * (len(seen) - last) + [True] * last
    assert seen == expected
    if last is not None:  # a provider not known: any provider's end is its end
        assert finished_at(body, content_type, stream_end(None)) == expected


def test_a_stream_end_matches_the_event_name_the_payload_type_a_sentinel_or_a_key() -> None:
    ending = StreamEnd(frozenset({"stop"}), frozenset({"[DONE]"}), frozenset({"done"}))
    assert ending.ends("stop", {"type": "other"}) and ending.ends(None, {"type": "stop"})
    assert ending.ends(None, " [DONE]") and ending.ends(None, {"done": True, "type": "chunk"})
    for event, payload in ((None, {"done": False}), ("delta", {"type": "delta"}), (None, "[DONE]x"), (None, [1])):
        assert not ending.ends(event, payload)
    assert not StreamEnd().ends("message_stop", {"type": "message_stop"})  # nothing on the wire ends it


def write(ending: StreamEnd, body: bytes, cause: str | None) -> list[dict[str, object]]:
    out = io.BytesIO()
    out.close = lambda: None  # type: ignore[method-assign]  # keep it readable after the writer closes
    exchange = RecordedExchange(EnvelopeWriter(out), SSE, None, ending)
    exchange.chunk(body)
    exchange.end(cause)
    return [orjson.loads(line) for line in out.getvalue().splitlines()]


def test_bytes_after_the_last_event_are_kept_without_a_cut_and_an_unfinished_event_is_one() -> None:
    ending = stream_end("anthropic")
    stop = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    after = write(ending, stop + b'event: ping\ndata: {"ty', "the client closed the response before its end")
    assert after[-1]["raw"] == 'data: {"ty' and after[-1]["event"] == "ping" and "problems" not in after[-1]
    # the event: line alone is an unfinished event: its name is recorded with the cut
    (cut,) = write(ending, b"event: message_stop\n", None)
    assert cut["event"] == "message_stop" and cut["raw"] == ""
    assert cut["problems"] == [
        {"kind": "unterminated-event", "message": "the body ended inside an event: the stream was cut after 20 bytes"}
    ]


def test_the_recorder_imports_no_rule_and_no_reporter() -> None:
    code = (
        "import sys; from stream_doctor.record import Recorder, proxy; from stream_doctor.record.exchange import stream_end;"
        "stream_end(None); print(sorted(m for m in sys.modules if m.startswith(('stream_doctor.rules', 'stream_doctor.reporters'))))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
