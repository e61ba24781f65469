"""An httpx transport (and response hook) that records every exchange into an envelope.

Works with ``httpx`` and with ``httpx2`` (what the current Anthropic and OpenAI Python SDKs are
built on): the response keeps its own library's classes, and only its byte stream is wrapped.
Each chunk is handed to the client first and recorded after, so streaming is neither delayed
nor altered.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Iterator, Protocol

if TYPE_CHECKING:
    from stream_doctor.record.exchange import RecordedExchange
    from stream_doctor.record.writer import EnvelopeWriter


class Sink(Protocol):
    """What a transport records into (``recorder.Recorder`` is one): the envelope's writer, whose clock
    times a request, and an exchange begun per response, fed its body's chunks."""

    writer: EnvelopeWriter

    def begin(
        self,
        method: str,
        url: str,
        body: bytes,
        headers: list[tuple[str, str]],
        status: int,
        response_headers: list[tuple[str, str]],
        start: float | None = None,
    ) -> RecordedExchange: ...


class RecordingTransport:
    """A sync transport: ``httpx2.Client(transport=RecordingTransport(recorder, httpx2.HTTPTransport()))``."""

    def __init__(self, recorder: Sink, wrapped: Any) -> None:
        self.recorder = recorder
        self.wrapped = wrapped

    def handle_request(self, request: Any) -> Any:
        request.read()
        start = self.recorder.writer.now()
        response = self.wrapped.handle_request(request)
        wrap_response(self.recorder, request, response, start)
        return response

    def close(self) -> None:
        self.wrapped.close()

    def __enter__(self) -> RecordingTransport:
        self.wrapped.__enter__()
        return self

    def __exit__(self, *args: Any) -> None:
        self.wrapped.__exit__(*args)


class AsyncRecordingTransport:
    """An async transport: ``httpx2.AsyncClient(transport=AsyncRecordingTransport(recorder, httpx2.AsyncHTTPTransport()))``."""

    def __init__(self, recorder: Sink, wrapped: Any) -> None:
        self.recorder = recorder
        self.wrapped = wrapped

    async def handle_async_request(self, request: Any) -> Any:
        await request.aread()
        start = self.recorder.writer.now()
        response = await self.wrapped.handle_async_request(request)
        wrap_response(self.recorder, request, response, start)
        return response

    async def aclose(self) -> None:
        await self.wrapped.aclose()

    async def __aenter__(self) -> AsyncRecordingTransport:
        await self.wrapped.__aenter__()
        return self

    async def __aexit__(self, *args: Any) -> None:
        await self.wrapped.__aexit__(*args)


def wrap_response(recorder: Sink, request: Any, response: Any, start: float | None = None) -> None:
    """Record ``request`` now and ``response``'s body as it is read (the stream is replaced by a recording one)."""
    exchange = recorder.begin(
        str(request.method),
        str(request.url),
        bytes(request.content),
        list(request.headers.multi_items()),
        response.status_code,
        list(response.headers.multi_items()),
        start,
    )
    library = sys.modules[type(response).__module__.partition(".")[0]]
    stream = response.stream
    if hasattr(stream, "__aiter__") and not hasattr(stream, "__iter__"):
        response.stream = _stream_class(library, asynchronous=True)(stream, exchange)
    else:
        response.stream = _stream_class(library, asynchronous=False)(stream, exchange)


_CLASSES: dict[tuple[str, bool], type] = {}


def _stream_class(library: Any, asynchronous: bool) -> type:
    """A byte stream of ``library`` (httpx or httpx2) that records what passes through it.

    The client checks that a response's stream is its own library's ``SyncByteStream`` or
    ``AsyncByteStream``, so the class is made per library."""
    key = (library.__name__, asynchronous)
    if key not in _CLASSES:
        base = library.AsyncByteStream if asynchronous else library.SyncByteStream
        _CLASSES[key] = type(
            "RecordingAsyncStream" if asynchronous else "RecordingStream",
            (_AsyncRecording if asynchronous else _SyncRecording, base),
            {},
        )
    return _CLASSES[key]


class _Recording:
    """What both byte streams share: the chunk handed over but not yet recorded is recorded before
    the exchange ends, so a client that stops right after an event still has it in the envelope."""

    def __init__(self, stream: Any, exchange: Any) -> None:
        self.stream = stream
        self.exchange = exchange
        self.handed: bytes | None = None  # given to the client, not yet recorded

    def record_handed(self) -> None:
        if self.handed is not None:
            handed, self.handed = self.handed, None
            self.exchange.chunk(handed)

    def stop(self, cause: str | None) -> None:
        self.record_handed()
        self.exchange.end(cause)


class _SyncRecording(_Recording):
    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self.stream:
                self.handed = chunk
                yield chunk  # the client has it first; recording follows
                self.record_handed()
        except GeneratorExit:
            self.stop("the client stopped reading the body")
            raise
        except BaseException as error:
            self.stop(f"the connection failed: {type(error).__name__}: {error}")
            raise
        self.stop(None)

    def close(self) -> None:
        try:
            self.stream.close()
        finally:
            self.stop("the client closed the response before its end")


class _AsyncRecording(_Recording):
    async def __aiter__(self) -> Any:
        try:
            async for chunk in self.stream:
                self.handed = chunk
                yield chunk
                self.record_handed()
        except GeneratorExit:
            self.stop("the client stopped reading the body")
            raise
        except BaseException as error:
            self.stop(f"the connection failed: {type(error).__name__}: {error}")
            raise
        self.stop(None)

    async def aclose(self) -> None:
        try:
            await self.stream.aclose()
        finally:
            self.stop("the client closed the response before its end")
