"""What HAR files and VCR cassettes share: HTTP exchanges turned into frames, with secrets removed.

Each interaction that is an LLM call becomes a ``request`` frame (method, URL, headers and the
decoded body) followed by its response body, decoded (base64, gzip) and cut into frames by the
same inner readers a bare capture uses (SSE, JSONL, JSON array, AWS event stream). The inner
readers number their frames and lines from the start of the body; ``rebase`` moves each position
into the original file through a ``BodyPlace``, and tags it with the interaction.

Credentials in the request line and headers never get past this module: ``Authorization``,
``x-api-key``, cookies and the like are replaced by ``[redacted]`` at read time, and so are keys in
URLs (``&`` or ``;`` separated, and user-info, which becomes ``redacted@host`` so the URL stays
valid). A request body is kept as sent: the rules compare it, and walking every body of a long
session for secrets would cost as much as reading it. Its credential fields at any depth
(``api_key``, ``apiKey``, ``key``, ``token``, ``secret``, ``password``, ``authorization`` …, outside
tool inputs) are replaced where something is written (``redact_body``: ``convert``'s envelope, the
recorder), and every report is rendered through ``engine/redaction.py``, which masks them and the values
the rules compare (tool inputs and results, events).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

import orjson

from stream_doctor.capture.base import KEPT_BODIES, Body, Capture, Exchange, Frame, InputProblem, Pos
from stream_doctor.capture.limits import Budget, body_too_big, check_count, decoded_body_cap
from stream_doctor.capture.repeats import Repeats
from stream_doctor.util import jsontext
from stream_doctor.util.credentials import REDACTED, is_secret_field_name, is_secret_header, redact_text

#: Query parameters that carry credentials: Gemini's ``key``, signed URLs' ``sig`` …
SECRET_PARAMS = frozenset(
    {
        "key",
        "api_key",
        "api-key",
        "apikey",
        "token",
        "access_token",
        "id_token",
        "refresh_token",
        "sig",
        "signature",
        "code",
        "password",
        "secret",
        "client_secret",
        "x-amz-signature",
        "x-amz-credential",
        "x-amz-security-token",
        "x-goog-signature",
        "x-goog-credential",
    }
)


def redact_headers(items: Iterable[tuple[Any, Any]]) -> dict[str, str]:
    """Headers as ``{lower-case name: value}`` (repeated headers joined with ``, ``), credentials redacted."""
    headers: dict[str, str] = {}
    for raw_name, raw_value in items:
        name = text_of(raw_name).strip().lower()
        if not name:
            continue
        text = text_of(raw_value)
        value = REDACTED if is_secret_header(name, text) else text
        headers[name] = value if name not in headers else f"{headers[name]}, {value}"
    return headers


def redact_url(url: str) -> str:
    """``url`` with user info and credential query parameters redacted; still a valid URL.

    User info becomes ``redacted@`` (``[redacted]`` is not allowed there: a host parser takes the
    brackets for an IPv6 address). Parameters may be separated by ``&`` or ``;``.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"redacted@{netloc.rpartition('@')[2]}"
    query = redact_query(parts.query) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


class LastUrl:
    """``redact_url`` for one reading, the last URL's redaction kept: a session's requests go to one
    URL, which would otherwise be parsed again at every turn. It lives as long as the reader that
    holds it; nothing keeps a URL past the replay (a Gemini URL carries its API key in its query)."""

    __slots__ = ("url", "redacted")

    def __init__(self) -> None:
        self.url: str | None = None
        self.redacted = ""

    def __call__(self, url: str) -> str:
        if url != self.url:
            self.url, self.redacted = url, redact_url(url)
        return self.redacted


_QUERY_SEPARATORS = re.compile(r"[&;]")


def redact_query(query: str) -> str:
    """A query string (or a form-encoded body) with credential parameters redacted, ``&``-joined."""
    pairs = []
    for part in _QUERY_SEPARATORS.split(query):
        if not part:
            continue
        for name, value in parse_qsl(part, keep_blank_values=True) or [(part, "")]:
            secret = name.lower() in SECRET_PARAMS or is_secret_field_name(name)
            pairs.append(f"{quote(name, safe='')}={REDACTED if secret else quote(value, safe='/:,')}")
    return "&".join(pairs)


#: Where a body holds a tool call's own input (what is diagnosed, compared with the stream's calls):
#: ``{"type": "tool_use", "input": {...}}`` and Gemini's ``functionCall.args``. Left as sent.
_TOOL_INPUT_KEYS = frozenset({"input", "args"})
_FORM = re.compile(r"[^\s=&;]+=[^\s&;]*(?:[&;][^\s=&;]+=[^\s&;]*)*")


def redact_body(body: Any, replaced: set[str] | None = None) -> Any:
    """A copy of a request body with credential fields replaced by ``[redacted]`` at any depth (a
    form-encoded text body is redacted like a query string): what a writer writes. The body itself is
    left as read, since the rules compare its values and a session's requests share their history's
    items; a tool input (never written into) is shared by the copy, not copied. ``replaced`` collects
    the values of the fields replaced (as text), for a report to mask wherever else they appear."""
    if isinstance(body, str):
        return redact_query(body) if _FORM.fullmatch(body.strip()) else redact_text(body)
    if not isinstance(body, (dict, list)):
        return body
    copy = _shallow(body)
    stack = [copy]
    while stack:  # iterative: a body may nest as deep as the JSON parser allows
        current = stack.pop()
        if isinstance(current, dict):
            tool_block = is_tool_block(current)
            for name, value in current.items():
                if isinstance(value, (dict, list)):
                    if is_tool_input(name, tool_block):
                        continue
                    current[name] = inner = _shallow(value)
                    stack.append(inner)
                elif isinstance(name, str) and is_secret_field_name(name) and value not in (None, "", True, False):
                    current[name] = REDACTED
                    if replaced is not None:
                        replaced.add(str(value))
        else:
            for index, item in enumerate(current):
                if isinstance(item, (dict, list)):
                    current[index] = inner = _shallow(item)
                    stack.append(inner)
    return copy


def is_tool_block(block: dict[Any, Any]) -> bool:
    """Whether a body's object is a tool block (``tool_use``, ``server_tool_use`` …), whose ``input`` is a tool's."""
    kind = block.get("type")
    return isinstance(kind, str) and "tool" in kind


def is_tool_input(name: Any, tool_block: bool) -> bool:
    """Whether the field ``name`` of an object (a tool block or not) holds a tool call's input, left as sent."""
    return name in _TOOL_INPUT_KEYS and (tool_block or name == "args")


def redact_request(record: Any, replaced: set[str] | None = None) -> Any:
    """A request frame's value (a HAR or cassette request, an envelope request record) as a writer
    writes it: its body through ``redact_body`` (its URL and headers were redacted as they were read)."""
    if isinstance(record, dict) and "body" in record:
        return {**record, "body": redact_body(record["body"], replaced)}
    return record


def _shallow(value: dict[Any, Any] | list[Any]) -> dict[Any, Any] | list[Any]:
    return dict(value) if isinstance(value, dict) else list(value)


def text_of(value: Any) -> str:
    """A header name or value as text (cassettes keep some as bytes, or as a list of values)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (list, tuple)):  # one level: a list inside is not a header value (and may nest 1,000 deep)
        return ", ".join(_scalar_text(v) for v in value)
    return _scalar_text(value)


def _scalar_text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if value is None or isinstance(value, str):
        return value or ""
    return jsontext.brief(value, 200) if isinstance(value, (dict, list, tuple)) else str(value)


def header(headers: dict[str, str], name: str) -> str | None:
    value = headers.get(name)
    return value.split(",")[0].strip() if value else None


#: The largest request body stream-doctor decodes and parses: a request carrying a few images is tens of
#: MB (Anthropic's Messages API takes 32 MB); a bigger one is kept as ``request_marker`` says, not
#: expanded whole (a 1 MB gzip body can claim a gigabyte).
MAX_REQUEST_BODY = 64 << 20


def request_marker() -> str:
    """What a request body over ``MAX_REQUEST_BODY`` is kept as: text saying so, in place of the body."""
    from stream_doctor.capture.limits import human

    return f"[request body not read: larger than {human(MAX_REQUEST_BODY)} once decoded, stream-doctor's limit]"


class BodyTooLarge(Exception):
    """A body is longer than the cap it was decoded under (not the capture's budget: that is LimitExceeded)."""


def decode_content(
    body: bytes, encoding: str | None, budget: Budget | None = None, cap: int | None = None
) -> tuple[bytes, str | None]:
    """Undo the codings ``encoding`` (a ``Content-Encoding`` value) lists that ``body`` still carries, the
    last applied first, then a gzip body whatever the headers said (its magic number tells). Returns the
    bytes and, when a coding could not be undone, why, naming it (SD008).

    What each coding makes is taken from ``budget`` (the capture's: LimitExceeded past it) as it is made;
    with ``cap``, a body longer than ``cap`` is BodyTooLarge. A coding is undone only while the bytes still
    look encoded: browsers and most recorders store a body decoded whatever its headers say."""
    from stream_doctor.capture.codings import GZIP_MAGIC, Undecodable, carries, codings

    budget = budget if budget is not None else Budget()
    data = body
    stated = codings(encoding)
    for coding in reversed(stated):
        signature = carries(data, coding)
        if signature is False or (signature is None and _looks_decoded(data)):
            break
        try:
            data = _undo(data, coding, budget, cap)
        except Undecodable as why:
            return body, f"Content-Encoding {coding}: {why}"
    if data.startswith(GZIP_MAGIC):
        try:
            data = _undo(data, "gzip", budget, cap)
        except Undecodable as why:
            label = "Content-Encoding gzip" if "gzip" in stated else "the body is gzip (by its magic number), but"
            return body, f"{label}: {why}"
    return data, None


def _undo(data: bytes, coding: str, budget: Budget, cap: int | None) -> bytes:
    from stream_doctor.capture.codings import Overflow, undo

    room = budget.left if cap is None else min(budget.left, cap)
    try:
        out = undo(data, coding, room)
    except Overflow:
        budget.take(room + 1)  # what was made counts, and past the budget it is the capture's limit
        raise BodyTooLarge from None
    budget.take(len(out))
    return out


def _looks_decoded(data: bytes) -> bool:
    """Whether a body with no coding signature reads as it is: text (UTF-8 without control characters but
    whitespace) or an AWS event stream. Compressed bytes are neither, past their first few bytes."""
    head = data[:4096]
    if not head.strip():
        return True
    try:
        text = head.decode("utf-8") if len(data) <= 4096 else head[:-4].decode("utf-8", "strict")
    except UnicodeDecodeError:
        text = None
    if text is not None and not _CONTROL.search(text):
        return True
    from stream_doctor.capture import READERS

    return READERS["eventstream"].sniff(head) > 0


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def unbase64(text: str | bytes, budget: Budget | None = None) -> bytes | None:
    """Base64 text decoded (None when it is not base64), its decoded size (3/4 of the text's, found
    without decoding) taken from ``budget`` first, so that text too long is refused before it is decoded."""
    import base64
    import binascii

    budget = budget if budget is not None else Budget()
    newline = b"\n" if isinstance(text, bytes) else "\n"
    budget.take((len(text) - text.count(newline)) * 3 // 4)  # type: ignore[arg-type]
    try:
        return base64.b64decode(text)
    except (binascii.Error, ValueError):
        return None


def request_body(raw: Any, budget: Budget | None = None, encoding: str | None = None) -> Any:
    """A request body as recorded: parsed JSON when it is JSON, else the text (or None); ``encoding`` is the
    request's ``Content-Encoding``. A body longer than ``MAX_REQUEST_BODY`` once decoded is ``request_marker()``."""
    if raw is None:
        return None
    if isinstance(raw, (dict, list)):
        return raw
    data = raw if isinstance(raw, bytes) else str(raw).encode("utf-8", "surrogatepass")
    try:
        data, _ = decode_content(data, encoding, budget, MAX_REQUEST_BODY)
    except BodyTooLarge:
        return request_marker()
    if len(data) > MAX_REQUEST_BODY:
        return request_marker()
    if not data.strip():
        return None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return data.decode("utf-8", "replace")


#: URL paths of the streaming endpoints stream-doctor reads (any host: gateways and proxies keep the path).
_LLM_PATH = re.compile(
    r"(/messages\b|/chat/completions\b|/completions\b|/responses\b|:streamGenerateContent|:generateContent"
    r"|/v2/chat\b|/converse-stream\b|/converse\b|/invoke-with-response-stream\b|/invoke\b|/api/chat\b"
    r"|/interactions\b|/threads/(?:[^/]+/)?runs$|/submit_tool_outputs$)",
)
_LLM_BODY_KEYS = ("messages", "contents", "input", "prompt")


def is_llm_call(method: str | None, url: str | None, body: Any, content_type: str | None) -> str | None:
    """None when the exchange looks like an LLM call; otherwise why it is skipped."""
    if (method or "POST").upper() != "POST":
        return f"a {method} request, not an LLM call"
    path = urlsplit(url or "").path if url else ""
    by_path = bool(_LLM_PATH.search(path)) if path else False
    by_body = isinstance(body, dict) and any(key in body for key in _LLM_BODY_KEYS)
    if not (by_path or by_body):
        return "not an LLM call (neither its URL nor its body looks like one)"
    return None


class BodyPlace(Protocol):
    """Where the bytes of a response body are in the original file."""

    def place(self, pos: Pos, body: bytes) -> Pos:
        """The position in the file of a frame the inner reader placed at ``pos`` in the body."""
        ...


@dataclass(frozen=True)
class Fixed:
    """Every frame at the start of the body: for bodies stored as base64, or inside a one-line JSON string."""

    line: int
    offset: int

    def place(self, pos: Pos, body: bytes) -> Pos:
        return Pos(pos.number, self.line, self.offset)


@dataclass(frozen=True)
class Lines:
    """A body whose lines are lines of the file: a YAML literal block (``|``), indented by ``indent``."""

    first_line: int  # the file line holding the body's first line
    line_starts: list[int]  # byte offset of every line of the file (or of the part of it that was read)
    indent: int
    line_shift: int = 0  # lines and bytes of the file before the part ``line_starts`` covers
    byte_shift: int = 0

    def place(self, pos: Pos, body: bytes) -> Pos:
        line = self.first_line + pos.line - 1
        column = pos.offset - (body.rfind(b"\n", 0, pos.offset) + 1)
        start = self.line_starts[min(line, len(self.line_starts)) - 1]
        return Pos(pos.number, line + self.line_shift, start + self.indent + column + self.byte_shift)


@dataclass(frozen=True)
class Folded:
    """A body written across several file lines with escapes (a YAML quoted scalar): a table of where each file
    line's share of the body starts."""

    body_offsets: list[int]  # body byte offset at which each file line's content starts (increasing)
    lines: list[int]  # the file line
    offsets: list[int]  # the file byte offset of that content

    def place(self, pos: Pos, body: bytes) -> Pos:
        at = max(0, bisect_right(self.body_offsets, pos.offset) - 1)
        return Pos(pos.number, self.lines[at], self.offsets[at])


@dataclass
class Exchanges:
    """What a container reader collects while it goes through a file's interactions."""

    path: str
    frames: list[Frame] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)
    count: int = 0  # frames added so far (``frames`` may have been taken away a turn at a time)
    #: what the bodies' expansions may still make; a reader starts it after the file's own bytes (``Budget(used=…)``)
    budget: Budget = field(default_factory=Budget)
    repeats: Repeats = field(default_factory=Repeats)  # the requests' repeated history, kept once
    redact_url: LastUrl = field(default_factory=LastUrl)  # the requests' URL, redacted once while it repeats

    def add(
        self,
        exchange: Exchange,
        request: dict[str, Any],
        body: bytes | None,
        content_type: str | None,
        place: BodyPlace,
        encoding: str | None = None,
        recorded_encoding: str | None = None,
    ) -> None:
        """One interaction: its request frame, then its response body cut into frames (when it is a stream).

        ``encoding`` lists the content codings to undo where the body still carries them (its
        ``Content-Encoding``); ``recorded_encoding`` what the recorded headers say, noted as a
        disagreement when the recorder stored the body decoded (a cassette's; a HAR file's bodies are
        decoded by definition and pass none)."""
        self.exchanges.append(exchange)
        if exchange.skipped is not None:
            return
        exchange.coding = encoding or recorded_encoding
        number = exchange.number
        self.repeats.share(request.get("body"))
        data = jsontext.dumps(request, default=str)
        self.frames.append(Frame(exchange.pos, data, request, kind="request", interaction=number))
        self.count += 1
        if body is None:
            return
        stored = body
        limits = self.budget.limits
        try:
            body, problem = decode_content(body, encoding, self.budget, decoded_body_cap(limits))
        except BodyTooLarge:
            raise body_too_big(limits) from None  # decoded whole (see DECODED_BODY_SHARE): refused, not cut
        if problem is not None:
            self.problems.append(InputProblem("body-undecodable", problem, exchange.pos, number))
            return
        stored_compressed = body is not stored
        exchange.body_size = len(body)
        inner = read_body(body, content_type)
        if inner is None:
            return
        disagreement = _metadata_disagreement(
            inner.container, content_type, None if stored_compressed else recorded_encoding
        )
        if disagreement is not None:  # the bytes are trusted; the headers are noted once (SD007)
            self.problems.append(InputProblem("metadata-disagrees", disagreement, exchange.pos, number))
        exchange.body_container = inner.container
        exchange.ended_cleanly = inner.ended_cleanly
        kept = KEPT_BODIES.get()
        if kept is not None:  # before the frames are placed in the file: their offsets are still the body's
            kept.append(Body.of(number, inner.container, body, inner.frames, inner.ended_cleanly))
        for frame in inner.frames:
            frame.pos = place.place(frame.pos, body)
            frame.interaction = number
            self.frames.append(frame)
        self.count += len(inner.frames)
        check_count(self.count)
        for found in inner.problems:
            where = place.place(found.pos, body) if found.pos is not None else exchange.pos
            self.problems.append(InputProblem(found.kind, found.message, where, number))

    def capture(self, container: str, size: int) -> Capture:
        ended = all(e.ended_cleanly for e in self.exchanges if e.skipped is None)
        return Capture(
            self.path,
            container,
            size,
            self.frames,
            problems=self.problems,
            ended_cleanly=ended,
            exchanges=self.exchanges,
        )


#: A reader's pass over a file's exchanges (``exchanges_reader.ExchangesReader.exchanges``): each added to ``Exchanges``
#: in turn, a yield after each.
ExchangesPass = Callable[[bytes, Exchanges], Iterator[None]]


def read_exchanges(exchanges: ExchangesPass, data: bytes, path: str, container: str) -> Capture:
    """Every exchange of the file ``data`` as one capture."""
    collected = Exchanges(path, budget=Budget(used=len(data)))
    for _ in exchanges(data, collected):
        pass
    return collected.capture(container, len(data))


def exchange_turns(
    exchanges: ExchangesPass, data: bytes, path: str, capture: Capture
) -> Iterator[tuple[Exchange, list[Frame], list[InputProblem]]]:
    """Each exchange of the file ``data`` as it is read: its exchange, frames and problems (the exchanges and
    problems also go to ``capture``, as ``read_exchanges`` would give them); one exchange's frames at a time."""
    collected = Exchanges(path, budget=Budget(used=len(data)))
    for _ in exchanges(data, collected):
        exchange = collected.exchanges[-1]
        capture.exchanges.append(exchange)
        capture.problems += collected.problems
        yield exchange, collected.frames, collected.problems
        collected.frames, collected.problems = [], []


def _metadata_disagreement(container: str, content_type: str | None, encoding: str | None) -> str | None:
    """What the recorded headers claim that the stored body is not (an edited cassette, a recorder that
    decoded the body but kept the headers), or None when they agree."""
    claims = []
    media = (content_type or "").split(";")[0].strip().lower()
    # text/plain SSE and a JSON array stream served as application/json (Gemini's streamGenerateContent
    # without alt=sse) are what those servers really send
    agreeing = (media == "text/plain" and container == "sse") or (media == "application/json" and container == "json")
    if media and _STREAM_TYPES.get(media) != container and not agreeing:
        claims.append(f"Content-Type {media}")
    declared = (encoding or "").split(",")[0].strip().lower()
    if declared in ("gzip", "deflate", "br", "zstd"):  # said of a body stored uncompressed
        claims.append(f"Content-Encoding {declared}")
    if not claims:
        return None
    return f"the recorded headers say {' and '.join(claims)}, but the stored body is plain {container} text: read as {container}"


_STREAM_TYPES = {
    "text/event-stream": "sse",
    "application/vnd.amazon.eventstream": "eventstream",
    "application/x-ndjson": "jsonl",
    "application/ndjson": "jsonl",
    "application/jsonl": "jsonl",
    "application/x-jsonlines": "jsonl",
}


def read_body(body: bytes, content_type: str | None) -> Capture | None:
    """The response body cut into frames by the inner reader its content type (or content) calls for.

    None when it is not a stream: an empty body, or one JSON object (a non-streamed reply or an error).
    """
    from stream_doctor.capture import BODY_READERS, READERS, sniff_scores

    if not body.strip():
        return None
    media = (content_type or "").split(";")[0].strip().lower()
    name = _STREAM_TYPES.get(media)
    if name is None:
        stripped = body.lstrip()
        if stripped.startswith(b"{") and b"\n" not in stripped.rstrip():
            try:
                orjson.loads(stripped)
            except orjson.JSONDecodeError:
                pass
            else:
                return None  # one JSON object: a whole reply, not a stream
        head = body[:65536]
        scores = sniff_scores(head, BODY_READERS)
        best = max(scores, key=lambda n: scores[n])
        if scores[best] <= 0:
            return None
        name = best
    return READERS[name].read(body, "<body>")
