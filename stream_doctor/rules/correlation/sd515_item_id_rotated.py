"""Events name an output item by an id other than the one it was added with.

What it checks:
    Every Responses event about an output item carries its ``output_index`` and ``item_id``.
    The ``item_id`` must stay the id of ``response.output_item.added``'s item.

Why it matters:
    Harmless for a client that keys items by ``output_index`` (stream-doctor does). A client that
    looks items up by ``item_id`` finds nothing and drops the deltas, or throws: GitHub Copilot's
    ``/responses`` endpoint sends a new id on every event, and the AI SDK lost text and reasoning
    until it keyed by ``output_index`` (vercel/ai #18548). A changed id on a call also hides which
    ``fc_…`` item the ``function_call_output`` answers.

Severity:
    warning. Clients that look items up by ``item_id`` drop the deltas (the AI SDK until vercel/ai
    #18548); ``output_index`` keyed clients read it right.
    What if the request asked for this? No request setting rotates an item's id mid-stream.

Example:
    response.output_item.added {"output_index":1,"item":{"id":"msg_01","type":"message",…}}
    response.output_text.delta {"output_index":1,"item_id":"msg_02","delta":"Hel"}

How to fix:
    Key items by ``output_index`` and take the item's id from ``response.output_item.added``;
    answer calls with their ``call_id``. Report the endpoint's changing ids.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import ItemIdRotated
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule(
    "An event names an output item by another id than it was added with", Severity.WARNING, reads=("item-id-rotated",)
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        "Key output items by output_index and take the id from response.output_item.added (vercel/ai #18548)",
        words=(ItemIdRotated, rotated),
    )


def rotated(facts: ItemIdRotated) -> str:
    item = facts.item
    label = f"{item.item_type} item"
    if item.is_call:
        label = f"{item.item_type} {item.name or '?'} ({item.call_id or 'no id'})"
    return (
        f"{label} at output_index {facts.output_index} was added as {facts.added!r}, but {facts.event} names it "
        f"{facts.named!r}; keyed by output_index the events still fit together, but a client that looks items up "
        f"by item_id finds no item and drops this event and the ones after it"
    )
