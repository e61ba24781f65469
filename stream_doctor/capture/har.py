"""HAR 1.2 files: what browser devtools, mitmproxy and HTTP proxies export (http://www.softwareishard.com/blog/har-12-spec/).

``log.entries[]`` each hold a ``request`` (``method``, ``url``, ``headers``, ``postData.text``) and
a ``response`` (``status``, ``headers``, ``content.text``, base64 when ``content.encoding`` says
so; Polly.JS's list of compressed chunks, see ``_polly_chunks``). An entry that is an LLM call
becomes a request frame and its response body's frames (see ``exchange``); any other entry (a
page, a script, telemetry) is skipped and counted. A response body is one JSON string on one line
of the file, so every frame of an entry points at that line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import orjson

from stream_doctor.capture._text import json_error
from stream_doctor.capture.base import NOT_JSON, Capture, CaptureError, Exchange, Frame, Pos
from stream_doctor.capture.exchanges_reader import ExchangesReader
from stream_doctor.capture.json_array import _Splitter
from stream_doctor.capture.starts.har import could_be

if TYPE_CHECKING:
    from stream_doctor.capture.http_frames import Exchanges


def _sniff(head: bytes) -> tuple[int, str]:
    if could_be(head):
        return 95, ""
    return 0, 'does not start with {"log": (not a HAR file)'


def _wanted(path: tuple[str | int, ...]) -> bool:
    size = len(path)
    if size < 3 or path[0] != "log" or path[1] != "entries":
        return False
    if size == 3:
        return True
    return path[3:] in (("request",), ("response", "content", "text"), ("request", "postData", "text"))


def _entry_wanted(path: tuple[str | int, ...]) -> bool:
    return path in (("request",), ("response", "content", "text"))


#: The path of a structural token of the document's outer levels, to find ``log.entries``.
_OUTER = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"|[][{},:]', re.DOTALL)
_PIECE = 1 << 20


class _Fallback(Exception):
    """The file is not the plain shape the entry-by-entry read proves (a broken or odd HAR file): it is read whole."""


def _entries_start(data: bytes) -> int:
    """The offset of the ``[`` that opens ``log.entries`` (one pass over the tokens before it)."""
    slots: list[str | int] = []  # the key (or index) being read at each open level
    objects: list[bool] = []
    awaiting_key: list[bool] = []
    for match in _OUTER.finditer(data):
        at = match.start()
        byte = data[at]
        if byte == 0x22:  # a string
            if objects and objects[-1] and awaiting_key[-1]:
                slots[-1] = match.group()[1:-1].decode("utf-8", "replace")
        elif byte == 0x7B or byte == 0x5B:  # { [
            if byte == 0x5B and objects == [True, True] and slots == ["log", "entries"]:
                return at
            objects.append(byte == 0x7B)
            awaiting_key.append(byte == 0x7B)
            slots.append("" if byte == 0x7B else 0)
        elif byte == 0x7D or byte == 0x5D:  # } ]
            if not objects:
                break
            objects.pop()
            awaiting_key.pop()
            slots.pop()
        elif byte == 0x3A:  # :
            if awaiting_key:
                awaiting_key[-1] = False
        elif objects and objects[-1]:  # ,
            awaiting_key[-1] = True
    raise _Fallback


class _EntrySplitter(_Splitter):
    lone_cr_ends_lines = False  # a HAR file's positions count LF-ended lines (``Source.line_of``)


def _entries(data: bytes) -> Iterator[Frame]:
    """Each entry of ``log.entries`` decoded alone, as a frame with its line and offset in the file.

    _Fallback (before the first entry or after the last) when the file is not a plain HAR document.
    """
    start = _entries_start(data)
    splitter = _EntrySplitter(Capture("", "json", 0, []), base=start, line=data.count(b"\n", 0, start) + 1)
    for at in range(start, len(data), _PIECE):
        for frame in splitter.feed(data[at : at + _PIECE]):
            if frame.value is NOT_JSON:
                raise _Fallback
            yield frame
        if splitter.closed:
            break
    if not splitter.closed:
        raise _Fallback
    # the rest of the document (version, creator, pages …) must hold together without the entries
    try:
        rest = orjson.loads(data[:start] + b"[]" + data[splitter.closed_at + 1 :])
    except orjson.JSONDecodeError:
        raise _Fallback from None
    if rest.get("log", {}).get("entries") != []:
        raise _Fallback


def _read(data: bytes, collected: Exchanges) -> Iterator[None]:
    """Each entry added to ``collected`` (a yield after each): one entry decoded at a time, so memory
    follows the largest entry; a file of another shape is read whole, as a HAR file was before."""
    # Imported here: sniffing (what `check` does to every file of a folder) needs none of it.
    from stream_doctor.capture._text_places import json_places

    entries = _entries(data)
    number = 0
    try:
        for frame in entries:
            number += 1
            entry, content, offset, line = frame.value, frame.data, frame.pos.offset, frame.pos.line
            places = json_places(content, _entry_wanted) if isinstance(entry, dict) else {}

            def line_of(at: int, content: bytes = content, offset: int = offset, line: int = line) -> int:
                return line + content.count(b"\n", 0, at - offset)

            request_at = places.get(("request",))
            start = (
                offset + request_at
                if request_at is not None
                else (offset if isinstance(entry, (dict, list, str)) else 0)
            )
            pos = Pos(0, line_of(start) if start else 1, start)
            text_at = places.get(("response", "content", "text"))
            _entry(collected, line_of, number, entry, pos, None if text_at is None else offset + text_at)
            del frame, entry, content
            yield
    except _Fallback:
        if number:  # some entries were read (and may have been replayed): the error whole-document reading gives
            raise _document_error(data) from None
        yield from _read_whole(data, collected)


def _document_error(data: bytes) -> CaptureError:
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return CaptureError(f"not a readable HAR file: {json_error(exc)}", line=exc.lineno)
    return CaptureError("not a HAR file: log.entries is not one plain list")


def _read_whole(data: bytes, collected: Exchanges) -> Iterator[None]:
    from stream_doctor.capture._text_places import Source, json_places

    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise CaptureError(f"not a readable HAR file: {json_error(exc)}", line=exc.lineno) from None
    log = document.get("log") if isinstance(document, dict) else None
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(entries, list):
        raise CaptureError("not a HAR file: no log.entries list")
    source = Source(data)
    places = json_places(data, _wanted)
    for number, entry in enumerate(entries, 1):
        index = number - 1
        start = places.get(("log", "entries", index, "request"), places.get(("log", "entries", index), 0))
        pos = Pos(0, source.line_of(start), start)
        _entry(
            collected,
            source.line_of,
            number,
            entry,
            pos,
            places.get(("log", "entries", index, "response", "content", "text")),
        )
        yield


def _entry(
    collected: Exchanges, line_of: Callable[[int], int], number: int, entry: Any, pos: Pos, where: int | None
) -> None:
    from stream_doctor.capture.http_frames import Fixed, header, is_llm_call, redact_headers, request_body
    from stream_doctor.capture.http_frames import unbase64 as _unbase64

    def unbase64(text: str) -> bytes:  # text that is not base64 is kept as it is
        decoded = _unbase64(text, collected.budget)
        return decoded if decoded is not None else text.encode("utf-8", "surrogatepass")

    fallback = Fixed(pos.line, pos.offset)
    if not isinstance(entry, dict):
        collected.add(
            Exchange(number, pos, None, None, None, None, skipped="not an entry object"), {}, None, None, fallback
        )
        return
    request = _dict(entry.get("request"))
    response = _dict(entry.get("response"))
    method = request.get("method") if isinstance(request.get("method"), str) else None
    raw_url = request.get("url")
    url = collected.redact_url(raw_url) if isinstance(raw_url, str) else None
    headers = redact_headers(_pairs(request.get("headers")))
    post = _dict(request.get("postData"))
    text = post.get("text")
    post_base64, post_codings = _text_encoding(post.get("encoding"))
    if isinstance(text, str) and post_base64:
        text = unbase64(text)
    body = request_body(text, collected.budget, post_codings or headers.get("content-encoding"))
    response_headers = redact_headers(_pairs(response.get("headers")))
    content = _dict(response.get("content"))
    content_type = content.get("mimeType") if isinstance(content.get("mimeType"), str) else None
    content_type = content_type or header(response_headers, "content-type")
    status = response.get("status") if isinstance(response.get("status"), int) else None
    skipped = is_llm_call(method, url, body, content_type)
    exchange = Exchange(number, pos, method, url, status, None, skipped=skipped, response_headers=response_headers)
    raw = content.get("text")
    content_base64, content_codings = _text_encoding(content.get("encoding"))
    payload: bytes | None = None
    codings = content_codings or response_headers.get("content-encoding")
    if isinstance(raw, str):
        payload = _polly_chunks(raw, content_base64, collected) if codings else None
        if payload is None:
            payload = unbase64(raw) if content_base64 else raw.encode("utf-8", "surrogatepass")
    place = Fixed(line_of(where), where + 1) if where is not None else fallback
    # Browsers and proxies store the body decoded, whatever Content-Encoding says (no disagreement is
    # noted); bytes still encoded (a proxy's export, base64) are decoded by what the headers say.
    value = {"method": method, "url": url, "headers": headers, "body": body}
    collected.add(exchange, value, payload, content_type, place, codings)


#: Polly.JS's node-http adapter keeps a content-encoded body as the chunks it came in, each still
#: compressed: ``content.text`` is a JSON array of them, base64 with ``"encoding": "base64"`` (Polly 4
#: and later), hex without it (Polly 1 to 3); see ``getBodyFromChunks`` in @pollyjs/adapter-node-http.
_CHUNK_LIST = re.compile(r'\A\[\s*(?:"[A-Za-z0-9+/=]*"\s*(?:,\s*"[A-Za-z0-9+/=]*"\s*)*)?\]\Z')
_HEX_TEXT = re.compile(r"\A(?:[0-9a-fA-F]{2})*\Z")


def _polly_chunks(text: str, base64: bool, collected: Exchanges) -> bytes | None:
    """A Polly.JS chunk list (for a response whose headers name a content coding) as the body's bytes,
    each chunk decoded alone and in order; None when ``text`` is not one."""
    from stream_doctor.capture.http_frames import unbase64

    if not text.startswith("[") or not _CHUNK_LIST.match(text):
        return None
    chunks = orjson.loads(text)
    if not chunks:
        return None
    if base64:
        parts = []
        for chunk in chunks:
            part = unbase64(chunk, collected.budget)
            if part is None:
                return None
            parts.append(part)
        return b"".join(parts)
    if not all(_HEX_TEXT.match(chunk) for chunk in chunks):
        return None
    collected.budget.take(sum(len(chunk) for chunk in chunks) // 2)
    return b"".join(bytes.fromhex(chunk) for chunk in chunks)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _pairs(headers: Any) -> list[tuple[Any, Any]]:
    if not isinstance(headers, list):
        return []
    return [(h.get("name"), h.get("value")) for h in headers if isinstance(h, dict)]


def _text_encoding(value: Any) -> tuple[bool, str | None]:
    """What a ``postData.encoding`` or ``content.encoding`` says: whether ``text`` is base64 (the HAR
    spec's one value), and any content codings it names beside it ("base64, gzip"), as a
    ``Content-Encoding`` value."""
    if not isinstance(value, str):
        return False, None
    tokens = [token.strip().lower() for token in value.split(",") if token.strip()]
    others = [token for token in tokens if token != "base64"]
    return "base64" in tokens, ", ".join(others) or None


#: Reader for HAR 1.2 files (browser devtools, mitmproxy, proxy exports).
READER = ExchangesReader("har", "HAR 1.2 (browser devtools, mitmproxy, proxies)", _sniff, _read)
