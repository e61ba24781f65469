"""The fault variants' plans: a stream cut or dropped inside its first tool call, a refusal in the provider's own
error shape (``endpoints.error_body``, the server's own), an error event before or in the stream.
``variants.py`` declares them."""

from __future__ import annotations

import random
from bisect import bisect_right
from itertools import accumulate

from stream_doctor.serve.endpoints import error_body
from stream_doctor.serve.framing import pieces_plan, plan_of
from stream_doctor.serve.wire import Plan, Recorded

#: the message of every error a fault writes: an application's log says where it came from
MESSAGE = "stream-doctor serve: a fault variant"

#: the providers a 429 is written for, in their own shape
RATE_LIMITED = ("anthropic", "openai", "openai-responses", "mistral", "gemini", "bedrock", "cohere", "ollama")


def refused(recorded: Recorded, status: int) -> Plan:
    """The provider's own JSON error response with ``status``, instead of the stream."""
    body, headers = error_body(recorded.provider, status, MESSAGE)
    return Plan(status, tuple(headers.items()), ((0.0, body),))


def rate_limited(recorded: Recorded, rng: random.Random) -> Plan:
    return refused(recorded, 429)


def overloaded(recorded: Recorded, rng: random.Random) -> Plan:
    return refused(recorded, 529)


# -- error events -------------------------------------------------------------------------------


def _error_event(provider: str, served: int) -> bytes:
    """An overloaded error as an SSE event in the provider's stream, after ``served`` events."""
    import orjson  # serving needs it; the command line's --help (the variants' sentences) does not

    if provider == "anthropic":
        # https://docs.anthropic.com/en/docs/build-with-claude/streaming#error-events
        overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": MESSAGE}}
        return b"event: error\ndata: " + orjson.dumps(overloaded) + b"\n\n"
    if provider == "openai-responses":
        # https://platform.openai.com/docs/api-reference/responses-streaming/error
        error: dict[str, object] = {
            "type": "error",
            "code": "server_error",
            "message": MESSAGE,
            "param": None,
            "sequence_number": served,
        }
        return b"event: error\ndata: " + orjson.dumps(error) + b"\n\n"
    # Chat Completions: a data-only event holding an error object, which openai-python's Stream raises as an
    # APIError (``_streaming.py``: ``if is_mapping(data) and data.get("error")``)
    chat_error = {"message": MESSAGE, "type": "server_error", "param": None, "code": None}
    return b"data: " + orjson.dumps({"error": chat_error}) + b"\n\n"


#: the providers whose streams carry a documented error event
ERROR_EVENTS = ("anthropic", "openai", "openai-responses")


def error_first(recorded: Recorded, rng: random.Random) -> Plan:
    return pieces_plan(recorded, [_error_event(recorded.provider, 0)])


def error_mid_stream(recorded: Recorded, rng: random.Random) -> Plan:
    kept = cut_point(recorded, rng)
    events = [data for _, data in recorded.events[:kept]]
    return pieces_plan(recorded, [*events, _error_event(recorded.provider, kept)])


# -- cuts ---------------------------------------------------------------------------------------


def cut_after_event(recorded: Recorded, rng: random.Random) -> Plan:
    kept = cut_point(recorded, rng)
    return pieces_plan(recorded, [data for _, data in recorded.events[:kept]], then="close")


def cut_before_completion(recorded: Recorded, rng: random.Random) -> Plan:
    """Every event before the first tool call's completion event, then the connection closes: all its
    fragments arrived, the event that says it is complete never does (an application that runs a call once
    its arguments parse runs this one)."""
    span = first_call(recorded)
    kept = span[1] if span is not None and span[1] is not None else cut_point(recorded, rng)
    return pieces_plan(recorded, [data for _, data in recorded.events[:kept]], then="close")


#: the pace of events whose capture recorded no times (seconds apart)
PACE = 0.01


def disconnect_after(recorded: Recorded, rng: random.Random) -> Plan:
    """The events paced as recorded (or ``PACE`` apart) up to a seeded moment inside the first tool call's
    events, then nothing: the connection closes."""
    kept = cut_point(recorded, rng)
    times = _times(recorded)
    reads = []
    for number, (_, data) in enumerate(recorded.events[:kept]):
        reads.append((times[number] - (times[number - 1] if number else 0.0), data))
    last = times[kept - 1] if kept else 0.0
    following = times[kept] if kept < len(times) else last + PACE
    reads.append((rng.uniform(0.0, max(0.0, following - last)), b""))
    return plan_of(recorded, reads, then="close")


def _times(recorded: Recorded) -> list[float]:
    if all(at is None for at, _ in recorded.events):
        return [PACE * number for number in range(len(recorded.events))]
    times, last = [], 0.0
    for at, _ in recorded.events:
        last = max(last, at) if at is not None else last
        times.append(last)
    return times


def cut_point(recorded: Recorded, rng: random.Random) -> int:
    """How many events a cut keeps: seeded, after the first tool call began and before it completed
    (before it, when one event carries it whole); anywhere but the end when the stream holds no call."""
    count = len(recorded.events)
    span = first_call(recorded)
    if span is None:
        return rng.randint(1, count - 1) if count > 1 else 0
    began, completed = span
    last = completed if completed is not None else count - 1
    return rng.randint(began + 1, last) if last > began else began


def first_call(recorded: Recorded) -> tuple[int, int | None] | None:
    """The events (indices in ``recorded.events``) where the first tool call began and completed (None: it
    never did), as the reference accumulator reads the body; None when it holds no call."""
    from stream_doctor.api import replay

    try:
        calls = replay(recorded.body, provider=recorded.provider, name="<served>").stream.calls
    except Exception:  # noqa: BLE001 - a body the replay cannot read is cut anywhere, as one without calls
        return None
    if not calls:
        return None
    starts = list(accumulate((len(data) for _, data in recorded.events[:-1]), initial=0))
    began = max(0, bisect_right(starts, calls[0].started.offset) - 1)
    ended = calls[0].ended
    return began, (max(0, bisect_right(starts, ended.offset) - 1) if ended is not None else None)
