"""A client that runs a tool as soon as its required properties are present would have run it too early.

What it checks:
    For each completed call whose tool's schema has required top-level properties, the
    fragments are read once, in order, as a client that repairs partial JSON does (the AI SDK's
    ``parsePartialJson``, jiter's partial mode: an open string counts, closed). Reported: the
    first fragment after which every required property had a value, when one of those values was
    still incomplete and later changed, with what such a client would have read and the final
    value.

Why it matters:
    "Run when the required fields are there" is a common shortcut for starting tools early, and
    it is wrong whenever a value is still streaming: ``{"command": "in`` has a ``command``, and
    a shell tool would run ``in`` instead of ``install -r requirements.txt`` (vercel/ai #13137
    ran ``{"query":"test"}`` instead of ``{"query":"test","limit":10}``). The capture shows
    where that shortcut would have fired; SD101 shows a premature execution that did happen.

Severity:
    info. A hazard for clients that run tools early, not a bug in the stream.

Example:
    fragment 1  {"command": "in
    fragment 2  stall -r requirements.txt"}

How to fix:
    Start a tool only at its call's completion event; show partial arguments in the UI if you
    must, but never act on them.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.rules.base import Rule, rule
from stream_doctor.values.findings import Finding, Severity


@rule("Running the tool once its required properties were present would have used incomplete values", Severity.INFO)
def check(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    from stream_doctor.conversation.partial import eager_point
    from stream_doctor.conversation.schemas import required

    # A session's turns declare the very same tool objects (``requests.History``): each one's required
    # properties are read once, by the tool's identity (the conversation holds every tool meanwhile).
    required_of: dict[int, list[str]] = {}
    for turn, call, tools in conversation.checked_calls:
        tool = tools.get(call.name or "")
        if tool is None or tool.schema is None or call.fragment_count < 2:
            continue
        names = required_of.get(id(tool))
        if names is None:
            names = required_of[id(tool)] = required(tool)
        point = eager_point(call.fragment_texts, call.raw_arguments, names)
        if point is None:
            continue
        pos = call.fragment_positions[point.fragment]
        seen = ", ".join(f"{name}={_clip(text)}" for name, text in point.seen.items())
        final = ", ".join(f"{name}={_clip(text)}" for name, text in point.final.items())
        yield self.finding_at(
            conversation.stream_location(turn.number, pos),
            f"{call.name} ({call.call_id or 'no id'}): after fragment {point.fragment + 1} of {call.fragment_count} "
            f"every required property ({', '.join(names)}) had a value; a client that runs the tool "
            f"then would have used {seen}, but the call completed with {final}",
            "Run a tool only after its call's completion event, never when the partial arguments first validate",
            [("call completed", conversation.stream_location(turn.number, call.ended))],
            call.call_id,
        )


def _clip(text: str, limit: int = 60) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"
