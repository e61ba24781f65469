"""Other tools' recordings of HTTP exchanges, one module per recorder dialect (vcrpy's and go-vcr's
cassettes are ``capture/vcr.py``, HAR files ``capture/har.py``; what this project records, ``record/``):

- ``one_exchange``: ``{"request", "response"}`` a file (ddapm-test-agent, llama-stack);
- ``one_response``: ``{"status", "headers", "body"}``, a response and no request;
- ``session_records``: the .NET test recorder's ``{"Entries": […]}``;
- ``req_llm``: Elixir ReqLLM's transcripts;
- ``mastra``: Mastra's llm-recorder;
- ``nock``: nock's arrays of ``{"scope", …}``;
- ``httprr``: Go's httprr traces (langchaingo);
- ``gemini_cli``: gemini-cli's fake responses, one SDK call a line.

Each exchange that is an LLM call becomes a request frame and its response body's frames, like a HAR
entry or a cassette interaction (``capture/http_frames.py``, which also holds the one loop over a file's
exchanges). A body is one JSON string on one line of the file, so every frame of an exchange points at
that line.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from stream_doctor.capture._text import json_error
from stream_doctor.capture.base import CaptureError
from stream_doctor.capture.exchanges_reader import ExchangesReader
from stream_doctor.capture.recordings import (
    gemini_cli,
    httprr,
    mastra,
    nock,
    one_exchange,
    one_response,
    req_llm,
    session_records,
)
from stream_doctor.capture.starts.recording import could_be

if TYPE_CHECKING:
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.http_frames import Exchanges


class _JsonDialect(Protocol):
    """A dialect module of JSON documents: its start words, the shape it reads, and its exchanges."""

    def sniff(self, head: bytes) -> bool: ...

    def reads(self, data: bytes, document: Any) -> bool: ...

    def exchanges(self, data: bytes, document: Any, source: Source, collected: Exchanges) -> Iterator[None]: ...


#: The dialects of JSON documents, in the order a document is matched against their shapes.
_JSON_DIALECTS: tuple[_JsonDialect, ...] = (session_records, req_llm, mastra, one_response, one_exchange, nock)


def _sniff(head: bytes) -> tuple[int, str]:
    if could_be(head) and (
        gemini_cli.sniff(head) or httprr.sniff(head) or any(dialect.sniff(head) for dialect in _JSON_DIALECTS)
    ):
        return 95, ""
    return 0, (
        'neither {"request": …, "response": …}, {"Entries": […]}, {"method": …, "response": …} lines, '
        '{"status", "headers", "body"}, an httprr trace, a ReqLLM transcript, a nock array of {"scope": …} nor '
        'Mastra\'s {"meta": …, "recordings": […]}'
    )


def _exchanges(data: bytes, collected: Exchanges) -> Iterator[None]:
    """Each exchange of the recording, by the dialect that reads it."""
    from stream_doctor.capture._text_places import Source

    if gemini_cli.sniff(data):
        return gemini_cli.exchanges(data, collected)
    if httprr.sniff(data):
        return httprr.exchanges(data, collected)
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise CaptureError(f"not a readable JSON recording: {json_error(exc)}", line=exc.lineno) from None
    for dialect in _JSON_DIALECTS:
        if dialect.reads(data, document):
            return dialect.exchanges(data, document, Source(data), collected)
    raise CaptureError("not a JSON recording: neither an object nor an array")


#: Reader for other recorders' files of exchanges (see the module).
READER = ExchangesReader(
    "recording", "JSON recordings (one-exchange {request, response} wrappers, nock)", _sniff, _exchanges
)
