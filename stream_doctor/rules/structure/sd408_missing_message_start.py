"""Content arrived without a ``message_start`` before it.

What it checks:
    Every message begins with ``message_start``.

Why it matters:
    SDKs create the message snapshot from ``message_start``: without it the first delta fails
    ("Unexpected event order"), or content is attached to the previous message. The capture may also
    have been recorded from the middle of the stream.

Severity:
    warning on Anthropic streams: anthropic-sdk-python's ``accumulate_event`` raises "Unexpected
    event order" without ``message_start``. Info on Bedrock ConverseStream, where boto3 and the AI
    SDK read each event on its own and ``messageStart`` carries only the role.
    What if the request asked for this? No request setting removes the message start event.

Example:
    content_block_start {"index":0,...}   (first event of the capture)

How to fix:
    Record from the first byte of the response; fix a proxy that drops the first event.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator

from stream_doctor.accumulate.irregularities import NoMessageStart
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.structure._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("Content arrived before the message's start event", Severity.WARNING, reads=(NoMessageStart,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    # Only Anthropic's SDK builds its message snapshot from message_start; Bedrock's messageStart
    # carries nothing but the role, and boto3 and the AI SDK read each event on its own.
    anthropic = stream.capture.provider == "anthropic"
    message_start = stream.capture.protocol.words.message_start
    for finding in problems_of(
        stream,
        self,
        lambda problem: (
            f"content arrived outside any message ({message_start} had not opened one)"
            + ("" if anthropic else " (harmless to boto3 and the AI SDK, which read each event on its own)")
        ),
        "The capture may be missing its beginning; record from the first byte of the response",
    ):
        yield finding if anthropic else replace(finding, severity=Severity.INFO)
