"""A delta or a second stop arrived for a block that had already stopped.

What it checks:
    After ``content_block_stop`` for an index, no further delta or stop may refer to it.

Why it matters:
    The client already treated the call as complete and may have run it; the late fragments are
    lost. A gateway that closed a tool block when an unrelated empty text delta arrived did exactly
    this (agentgateway #2147).

Severity:
    error for a tool call's block: it was already complete, and every client that runs a call at its
    stop ran it without these fragments. warning for a text or thinking block (OpenAI Chat: content
    after the choice's finish_reason): no call ran short, but openai-python's ``chat.completions.stream()``
    helper fires its one ``content.done`` at the first finish_reason
    (``ChoiceEventState._content_done_events``), so a client that takes the text from that event loses
    what came after; loops that stop reading at the first finish_reason lose it too.
    What if the request asked for this? No setting sends content after a block's stop: with ``n``
    above 1 each choice's text and calls are blocks of their own, stopped by that choice's own
    finish_reason (``two_choices_n2.sse`` is silent), and a forced tool, a stop sequence or a token
    limit change the stop reason, not what may follow it.

Example:
    content_block_stop {"index":1}
    content_block_delta {"index":1,"delta":{"type":"input_json_delta","partial_json":"\"}"}}

How to fix:
    Fix the component that emits the early stop: a block ends only when its own content ends.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import AfterBlockStop
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.structure._problems import describe_events, grouped
from stream_doctor.values.findings import Finding, Severity


@rule("A delta or stop for a block that was already stopped", Severity.ERROR, reads=(AfterBlockStop,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for group in grouped(stream, self):
        first = group[0]
        related = [("block stopped", first.stopped)] + ([("last such event", group[-1].pos)] if len(group) > 1 else [])
        if not first.tool:
            yield self.finding(
                stream,
                first.pos,
                f"{describe_events(group)} arrived for the {first.block_type} block {first.key} after it stopped at line "
                f"{first.stopped.line}: no call ran short, but openai-python's stream helper fires its one content.done "
                "there (ChoiceEventState._content_done_events), so a client that takes the text from that event, or "
                "stops reading at the first finish_reason, loses them",
                "Read the stream to its end-of-stream event; a server should end a block only when its content ends",
                related,
                severity=Severity.WARNING,
            )
            continue
        yield self.finding(
            stream,
            first.pos,
            f"{describe_events(group)} arrived for block index {first.key} after {stream.capture.protocol.words.call_end} "
            f"closed it at line {first.stopped.line}; a client that ran the call at the stop ran it without them",
            "A translator closed the block too early; the call looked complete before all its input arrived",
            related,
        )
