"""Writing an envelope as a stream arrives: one JSON line per record, flushed at once.

Shared by the httpx transport and the recording proxy. Lines are written whole under a lock and
flushed right away, so a crash (of the application, the proxy or the upstream) leaves a readable
envelope that ends at the last record received (docs/envelope.md).
"""

from __future__ import annotations

import threading
import time
from typing import IO, Any

import orjson

from stream_doctor.capture.exchange import redact_body, redact_url
from stream_doctor.credentials import REDACTED, is_secret_header

VERSION = 1


class EnvelopeWriter:
    """Appends envelope records to an open binary file; ``t`` counts from ``start`` (``time.monotonic``)."""

    def __init__(self, file: IO[bytes], start: float | None = None) -> None:
        self.file = file
        self.start = time.monotonic() if start is None else start
        self.lock = threading.Lock()
        self.closed = False

    def now(self) -> float:
        return round(time.monotonic() - self.start, 6)

    def write(self, record: dict[str, Any]) -> int:
        """Write one record; returns the bytes written."""
        line = orjson.dumps(record, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE)
        with self.lock:
            if self.closed:
                return 0
            self.file.write(line)
            self.file.flush()
        return len(line)

    def header(self, provider: str | None, source: str, note: str | None = None) -> None:
        record: dict[str, Any] = {"sd": "header", "version": VERSION}
        if provider is not None:
            record["provider"] = provider
        record["source"] = source
        if note is not None:
            record["note"] = note
        self.write(record)

    def execute(self, call_id: str | None, name: str | None, input: Any, t: float | None = None) -> None:
        self.write(
            {"sd": "execute", "t": self.now() if t is None else t, "call_id": call_id, "name": name, "input": input}
        )

    def close(self) -> None:
        with self.lock:
            if not self.closed:
                self.closed = True
                self.file.close()


def request_record(
    t: float,
    method: str,
    url: str,
    body: bytes,
    headers: list[tuple[str, str]],
    redact: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The ``request`` record: the body as sent (JSON, or ``raw_body`` text), URL and headers without secrets."""
    record: dict[str, Any] = {"sd": "request", "t": t, "method": method, "url": redact_url(url)}
    try:
        value = orjson.loads(body) if body else {}
    except orjson.JSONDecodeError:
        value = None
    if type(value) is dict:
        record["body"] = redact_body(value)
    elif value is not None:  # JSON, but not an object (an array, a string …): its credential fields masked
        record["body"] = {}
        record["raw_body"] = orjson.dumps(redact_body(value)).decode()
    else:  # not JSON (a form, multipart, cut or invalid JSON): masked as text
        record["body"] = {}
        record["raw_body"] = redact_body(body.decode("utf-8", "replace"))
    record["headers"] = redact_headers(headers, redact)
    return record


def redact_headers(headers: list[tuple[str, str]], redact: frozenset[str] = frozenset()) -> dict[str, str]:
    """Headers by lower-case name, credentials and every header named in ``redact`` replaced by ``[redacted]``."""
    out: dict[str, str] = {}
    for raw_name, value in headers:
        name = raw_name.lower()
        shown = REDACTED if is_secret_header(name, value) or name in redact else value
        out[name] = shown if name not in out else f"{out[name]}, {shown}"
    return out


def provider_of(path: str) -> str | None:
    """The provider a request path belongs to, when the path says so unambiguously (a hint for detection)."""
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "openai"
    if path.endswith("/responses"):
        return "openai-responses"
    if ":streamGenerateContent" in path or ":generateContent" in path:
        return "gemini"
    if path.endswith("/api/chat"):
        return "ollama"
    return None
