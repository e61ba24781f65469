"""httprr traces (Go's ``golang.org/x/oscar/internal/httprr``, langchaingo's recordings): ``httprr trace v1``,
then per exchange a line ``<request bytes> <response bytes>`` and the raw HTTP/1.1 request and response
(headers, blank line, body; a body may be sent chunked)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from stream_doctor.capture.base import CaptureError, Exchange, Pos
from stream_doctor.capture.recordings._shared import fixed
from stream_doctor.capture.starts.recording import HTTPRR

if TYPE_CHECKING:
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.http_frames import Exchanges

_SIZES = re.compile(rb"(\d{1,12}) (\d{1,12})\r?\n")


def sniff(head: bytes) -> bool:
    return bool(HTTPRR.match(head))


def exchanges(data: bytes, collected: Exchanges) -> Iterator[None]:
    """Each length-prefixed raw HTTP request and response."""
    from stream_doctor.capture._text_places import Source

    source = Source(data)
    at = HTTPRR.match(data).end()  # type: ignore[union-attr]
    number = 0
    while at < len(data):
        sizes = _SIZES.match(data, at)
        line = source.line_of(at)
        if sizes is None:
            raise CaptureError("not a readable httprr trace: expected '<request bytes> <response bytes>'", line=line)
        request_size, response_size = int(sizes.group(1)), int(sizes.group(2))
        start = sizes.end()
        if start + request_size + response_size > len(data):
            raise CaptureError(
                f"the httprr trace is cut: an exchange of {request_size} + {response_size} bytes "
                f"goes past the end of the file ({len(data) - start} left)",
                line=line,
            )
        number += 1
        at = start + request_size + response_size
        _exchange(collected, source, number, start, request_size, data[start + request_size : at])
        yield


def _exchange(
    collected: Exchanges, source: Source, number: int, start: int, request_size: int, response: bytes
) -> None:
    """The exchange whose request is ``request_size`` bytes at ``start``, followed by ``response``."""
    from stream_doctor.capture.http_frames import Lines, header, is_llm_call, redact_headers, redact_url, request_body

    pos = Pos(0, source.line_of(start), start)
    first, request_headers, request_text, _ = _http_message(source.data[start : start + request_size])
    method, _, rest = first.partition(" ")
    url = redact_url(rest.rpartition(" ")[0] or rest)
    body = request_body(request_text, collected.budget)
    status_line, response_headers_raw, response_body, body_at = _http_message(response)
    parts = status_line.split()
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    response_headers = redact_headers(response_headers_raw)
    content_type = header(response_headers, "content-type")
    exchange = Exchange(number, pos, method.upper() or None, url, status, None,
                        skipped=is_llm_call(method, url, body, content_type))  # fmt: skip
    value = {"method": method.upper(), "url": url, "headers": redact_headers(request_headers), "body": body}
    place: Any
    body_start = start + request_size + body_at
    if "chunked" in (header(response_headers, "transfer-encoding") or "").lower():
        response_body = _dechunked(response_body)
        place = fixed(Pos(0, source.line_of(body_start), body_start))
    else:
        place = Lines(source.line_of(body_start), source.starts, 0)
    encoding = header(response_headers, "content-encoding")
    collected.add(exchange, value, response_body or None, content_type, place, encoding, encoding)


def _http_message(message: bytes) -> tuple[str, list[tuple[str, str]], bytes, int]:
    """A raw HTTP/1.1 message: its first line, its headers, its body and where the body starts."""
    head, separator, body = message.partition(b"\r\n\r\n")
    if not separator:
        head, separator, body = message.partition(b"\n\n")
    lines = head.decode("utf-8", "replace").splitlines()
    headers = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if colon:
            headers.append((name.strip(), value.strip()))
    return (lines[0] if lines else ""), headers, body, len(head) + len(separator)


def _dechunked(body: bytes) -> bytes:
    """A body sent with Transfer-Encoding: chunked, undone (what is not a well-formed chunk is kept as it is)."""
    out: list[bytes] = []
    at = 0
    while at < len(body):
        end = body.find(b"\r\n", at)
        size_text = body[at:end].split(b";")[0].strip() if end >= 0 else b""
        try:
            size = int(size_text, 16)
        except ValueError:
            return b"".join(out) + body[at:]
        if size == 0:
            break
        out.append(body[end + 2 : end + 2 + size])
        at = end + 2 + size + 2
    return b"".join(out)
