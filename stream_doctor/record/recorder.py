"""The Python recorder: one envelope for an application's run, written as its streams arrive.

    from stream_doctor.record import Recorder

    recorder = Recorder("run.envelope.jsonl")
    client = anthropic.Anthropic(http_client=httpx2.Client(transport=recorder.transport()))
    …
    recorder.executed(block.id, block.name, block.input)   # right where your code runs the tool

Every request the client sends is written as a ``request`` record (URL and headers without
credentials), every event of its response as an ``event`` record with its time offset, and each
``executed`` call as an ``execute`` record, in the order they happen; so an agent loop of several
turns is one envelope that ``stream-doctor replay`` reads turn by turn (docs/envelope.md).
Use one recorder per conversation: the exchanges of concurrent requests would interleave.
"""

from __future__ import annotations

import os
import stat
from typing import IO, Any, Iterable
from urllib.parse import urlsplit

import orjson

from stream_doctor.record.exchange import RecordedExchange, stream_end
from stream_doctor.record.transport import AsyncRecordingTransport, RecordingTransport, wrap_response
from stream_doctor.record.writer import EnvelopeWriter, provider_of, redact_headers, request_record

#: The header's ``source`` of every envelope a ``Recorder`` writes: how it knows a file it may replace.
SOURCE = "stream_doctor.record (httpx transport)"


class Recorder:
    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        provider: str | None = None,
        redact: Iterable[str] = (),
        note: str | None = None,
        replace: bool = False,
    ) -> None:
        """Start the envelope at ``path``. A file already there is replaced only when it is an envelope a
        ``Recorder`` wrote (the last run's), or when ``replace`` says so: anything else raises
        ``FileExistsError`` and is left as it was. ``redact`` names more headers to keep out of it,
        besides credentials (``authorization``, ``x-api-key``, ``api-key`` …)."""
        folder = os.path.dirname(os.fspath(path))
        if folder:
            os.makedirs(folder, exist_ok=True)
        self.path = os.fspath(path)
        self.redact = frozenset(name.lower() for name in redact)
        self.provider = provider
        self.writer = EnvelopeWriter(_created(self.path, replace))
        self.writer.header(provider, SOURCE, note)

    # -- wiring it into a client ---------------------------------------------------------------

    def transport(self, wrapped: Any = None) -> RecordingTransport:
        """A sync transport recording through ``wrapped`` (default: a new ``HTTPTransport`` of httpx2,
        or of httpx when httpx2 is not installed). Pass your client library's own transport when both are."""
        return RecordingTransport(self, wrapped if wrapped is not None else _library().HTTPTransport())

    def async_transport(self, wrapped: Any = None) -> AsyncRecordingTransport:
        """The same for ``AsyncClient`` (default: a new ``AsyncHTTPTransport``)."""
        return AsyncRecordingTransport(self, wrapped if wrapped is not None else _library().AsyncHTTPTransport())

    def event_hooks(self) -> dict[str, list[Any]]:
        """``Client(event_hooks=recorder.event_hooks())``: records without replacing the transport."""

        def response(response: Any) -> None:
            wrap_response(self, response.request, response)

        return {"response": [response]}

    def async_event_hooks(self) -> dict[str, list[Any]]:
        """``AsyncClient(event_hooks=recorder.async_event_hooks())``."""

        async def response(response: Any) -> None:
            wrap_response(self, response.request, response)

        return {"response": [response]}

    # -- what the application says --------------------------------------------------------------

    def executed(self, call_id: str | None, name: str | None, input: Any) -> None:
        """Mark that the application ran a tool, with the input exactly as passed to it."""
        self.writer.execute(call_id, name, input)

    # -- called by the transport ------------------------------------------------------------------

    def begin(
        self,
        method: str,
        url: str,
        body: bytes,
        headers: list[tuple[str, str]],
        status: int,
        response_headers: list[tuple[str, str]],
        start: float | None = None,
    ) -> RecordedExchange:
        """Write the request record (with the response's status and headers) and return the exchange to feed."""
        record = request_record(self.writer.now() if start is None else start, method, url, body, headers, self.redact)
        record["response"] = {"status": status, "headers": redact_headers(response_headers, self.redact)}
        self.writer.write(record)
        names = {name.lower(): value for name, value in response_headers}
        # What ends the stream, from the provider named here or else by the URL's path (an unknown
        # one: any provider's end), so a client closing after the last event cut nothing.
        ending = stream_end(self.provider or provider_of(urlsplit(url).path))
        return RecordedExchange(self.writer, names.get("content-type"), names.get("content-encoding"), ending)

    def close(self) -> None:
        self.writer.close()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *args: Any) -> None:
        self.close()


def _library() -> Any:
    try:
        import httpx2

        return httpx2
    except ImportError:
        try:
            import httpx
        except ImportError:
            raise ImportError(
                "stream_doctor.record needs httpx2 or httpx (the Anthropic and OpenAI SDKs bring one)"
            ) from None
        return httpx


def _created(path: str, replace: bool) -> IO[bytes]:
    """``path`` opened for a new envelope: created, or truncated when ``replace`` or when it holds one a
    ``Recorder`` wrote; else ``FileExistsError``, the file untouched."""
    try:
        return open(path, "xb")  # noqa: SIM115 - closed by the writer
    except FileExistsError:
        if not (replace or _recorded(path)):
            raise FileExistsError(
                f"{path}: exists, and is not an envelope a Recorder wrote; refusing to replace it "
                "(pass replace=True, or another path)"
            ) from None
    return open(path, "wb")  # noqa: SIM115 - closed by the writer


def _recorded(path: str) -> bool:
    """Whether ``path`` is a regular file whose first line is the header of an envelope a ``Recorder`` wrote."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as file:
            first = file.readline(64 * 1024)
        header = orjson.loads(first)
    except (OSError, orjson.JSONDecodeError):
        return False
    return isinstance(header, dict) and header.get("sd") == "header" and header.get("source") == SOURCE
