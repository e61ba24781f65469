"""Gemini blocked the prompt: the response has a ``promptFeedback.blockReason`` and no candidates.

What it checks:
    A chunk with ``promptFeedback.blockReason`` (``SAFETY``, ``BLOCKLIST``, ``PROHIBITED_CONTENT``,
    ``OTHER`` …) instead of candidates.

Why it matters:
    The response is HTTP 200, so a client that reads ``candidates[0]`` crashes, and one that skips
    empty chunks reports an empty answer as a normal end (ankit373/hydra PR #855). Nothing the model
    would have called was called.

Severity:
    error. The provider blocked the prompt: the response has no candidates.

Example:
    data: {"promptFeedback":{"blockReason":"SAFETY","safetyRatings":[…]},"usageMetadata":{…}}

How to fix:
    Check ``promptFeedback.blockReason`` before reading candidates and surface it as a failed turn;
    change the prompt or the ``safetySettings``.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import PromptBlocked
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("The prompt was blocked: the response has no candidates", Severity.ERROR, reads=("prompt-blocked",))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        "Check promptFeedback.blockReason before reading candidates and report it as a failed turn",
        words=(PromptBlocked, blocked),
    )


def blocked(facts: PromptBlocked) -> str:
    text = f"promptFeedback.blockReason {facts.reason}: the prompt was blocked and the response has no candidates"
    return text + (f" ({facts.detail})" if facts.detail else "")
