"""Replay a capture through the real client library a profile models (the ``clients`` extra).

Each module here drives one library the way an application does, over the capture's own bytes:
the official SDKs get an ``httpx.MockTransport`` that streams the response back (no network), so
their own SSE decoder, accumulator and event helpers run. Given the ``Original`` body (an SSE
capture's bytes as the server sent them), the transport returns exactly those bytes, cut one frame
at a time or at the byte offsets asked for, so the library's own framing reads them; without it
(an envelope, a JSON array), the frames are written back as SSE events (``sse_chunks``). A run records,
like a profile, every call the library hands over (with the frame that was last read when it
did) and the exception it raised. ``outcome_of`` puts a profile's run in the same terms, so the
test suite can require that both agree on every fixture.

Import cost and the extra: nothing here is imported by ``replay``; ``LIBRARIES`` names the module
and the package each profile needs, and ``load`` fails with the install command when it is missing.
"""

from __future__ import annotations

import importlib
from bisect import bisect_left
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Protocol

from stream_doctor.capture.base import NOT_JSON, Body, Capture, Frame, Pos
from stream_doctor.clients.base import ClientError, Handoff
from stream_doctor.util import jsontext

#: profile name -> (module in this package, the package it drives, what a handoff is compared by:
#: "value" the input the tool gets, "text" the argument text, "args" the text, or the value when the
#: client holds no text)
LIBRARIES: dict[str, tuple[str, str, str]] = {
    "anthropic-python": ("anthropic_sdk", "anthropic", "value"),
    "openai-python": ("openai_sdk", "openai", "text"),
    "pydantic-ai": ("pydantic_ai_models", "pydantic_ai", "args"),
    "langchain": ("langchain_chat_models", "langchain_openai", "value"),
    "litellm": ("litellm_stream", "litellm", "text"),
}


class LibraryMissing(RuntimeError):
    """The library is not installed; the message says how to install it (``package``: the pip package)."""

    def __init__(self, message: str, package: str | None = None) -> None:
        super().__init__(message)
        self.package = package


@dataclass(frozen=True, slots=True)
class Seen:
    """One call a client handed over, in terms a library and a profile can both state."""

    at: int | None  # the frame number read when it was handed; None: after the stream ended
    call_id: str | None
    name: str | None
    value: Any  # the input (parsed) or, for clients that hand text, the argument text


@dataclass(frozen=True, slots=True)
class Outcome:
    seen: tuple[Seen, ...]
    error: str | None  # the exception's class name
    error_at: int | None
    # what the exception said: shown by --client's run, not compared (a profile words it its own way)
    message: str = field(default="", compare=False)


def raised(exc: BaseException, position: list[Pos | None]) -> tuple[str, int | None, str]:
    """What a driver records of the exception its library raised: its class, the frame being read, its words."""
    return type(exc).__name__, position[0].number if position[0] is not None else None, str(exc)[:300]


@dataclass(frozen=True, slots=True)
class Original:
    """A response body as the server sent it, and where to cut it into the chunks the library reads."""

    data: bytes
    cuts: tuple[int, ...] | None = None  # byte offsets where a chunk ends; None: one frame per chunk


def body_capture(body: Body) -> Capture:
    """What a library driver reads of a response body: its frames, each placed at its span in the bytes the
    library is fed (frame numbers kept, so what the library did is placed on the capture's own events)."""
    frames = [
        replace(frame, pos=Pos(frame.pos.number, frame.pos.line, start))
        for frame, (start, _) in zip(body.frames, body.spans, strict=True)
    ]
    return Capture("<body>", body.container, len(body.data), frames, ended_cleanly=body.ended_cleanly)


class LibraryRun(Protocol):
    def __call__(self, capture: Capture, frames: list[Frame], original: Original | None = None) -> Outcome: ...


def load(profile: str) -> LibraryRun:
    """The ``run(capture, frames)`` function that replays through the real library of ``profile``."""
    module_name, package, _ = LIBRARIES[profile]
    # the driver first: it may set what the package reads at import (LiteLLM's offline cost map)
    module = importlib.import_module(f"stream_doctor.clients.library.{module_name}")
    try:
        importlib.import_module(package)
    except ImportError:
        from stream_doctor.util.install import install_extra

        message = f"{profile} needs the {package} package: {install_extra('clients')}"
        raise LibraryMissing(message, package.replace("_", "-")) from None
    return module.run  # type: ignore[no-any-return]


def outcome_of(handoffs: tuple[Handoff, ...], error: ClientError | None, profile: str) -> Outcome:
    """A profile's run in the terms its library's run is recorded in (``LIBRARIES``)."""
    mode = LIBRARIES[profile][2]
    seen = tuple(
        Seen(h.at.number if h.at is not None else None, h.call_id, h.name, _compared(h, mode)) for h in handoffs
    )
    if error is None:
        return Outcome(seen, None, None)
    return Outcome(seen, error.exception, error.pos.number if error.pos is not None else None)


def _compared(handoff: Handoff, mode: str) -> Any:
    if mode == "text":
        return handoff.arguments
    if mode == "args":
        return handoff.arguments if handoff.arguments else handoff.input
    return handoff.input


def body_chunks(
    capture: Capture, frames: list[Frame], position: list[Pos | None], original: Original | None
) -> Iterator[bytes]:
    """What the mock transport returns: the ``original`` bytes when given, else the frames as SSE."""
    if original is None:
        return sse_chunks(capture, frames, position)
    return original_chunks(original, frames, position)


def original_chunks(original: Original, frames: list[Frame], position: list[Pos | None]) -> Iterator[bytes]:
    """``original.data`` in pieces, noting in ``position[0]`` the last frame that began in the bytes
    delivered so far (cut at frame starts, the frame each piece completes)."""
    data = original.data
    events = [f for f in frames if f.kind == "event"]
    starts = [f.pos.offset for f in events]
    if original.cuts is None:
        ends = [*starts[1:], len(data)]
    else:
        ends = [*sorted({c for c in original.cuts if 0 < c < len(data)}), len(data)]
    begin = 0
    for end in ends:
        if end <= begin:
            continue
        began = bisect_left(starts, end) - 1
        position[0] = events[began].pos if began >= 0 else None
        yield data[begin:end]
        begin = end
    position[0] = None


def sse_chunks(capture: Capture, frames: list[Frame], position: list[Pos | None]) -> Iterator[bytes]:
    """The capture's events as the server sent them (one SSE event per chunk), noting in
    ``position[0]`` the frame being delivered, so a caller knows where the library was."""
    events = [f for f in frames if f.kind == "event"]
    for number, frame in enumerate(events):
        payload = _payload(capture, frame)
        lines = payload.split(b"\n")
        head = b"event: " + frame.event.encode() + b"\n" if frame.event else b""
        body = b"".join(b"data: " + line + b"\n" for line in lines)
        last = number == len(events) - 1
        tail = b"" if last and not capture.ended_cleanly else b"\n"
        position[0] = frame.pos
        yield head + body + tail
    position[0] = None


def _payload(capture: Capture, frame: Frame) -> bytes:
    if capture.container in ("sse",):
        return frame.data
    if frame.value is NOT_JSON:
        return frame.data
    if isinstance(frame.value, str):
        return frame.value.encode("utf-8", "surrogatepass")
    return jsontext.dumps(frame.value)


def http_module(sdk: str) -> Any:
    """The HTTP package an SDK is built on (``httpx``, or ``httpx2`` in recent Stainless SDKs)."""
    base = importlib.import_module(f"{sdk}._base_client")
    for name in ("httpx2", "httpx"):
        module = getattr(base, name, None)
        if module is not None:
            return module
    return importlib.import_module("httpx")
