"""A Gemini call that streamed with a thoughtSignature is sent back without it, or moved.

What it checks:
    Gemini puts a ``thoughtSignature`` on the first ``functionCall`` part of a step (only that one
    when the calls are parallel, which SD524 notes as info). This rule reads the follow-up request's
    ``contents`` and finds the model turn that sends those calls back: each call that streamed with a
    signature must go back with one, at the same position among the turn's calls. A request that
    drops the signature, or reorders the calls so the signed part is no longer where it was, is
    reported; a turn sent back unchanged is not.

Why it matters:
    The signature validates the model's reasoning for that step. Gemini 3 answers 400 "Function
    call is missing a thought_signature in functionCall parts" when the first call of a step has
    none (https://ai.google.dev/gemini-api/docs/thought-signatures); Gemini 2.5 accepts the request
    but loses the reasoning context. Clients break here when they rebuild parts from their own call
    records: storing one signature per call and sorting calls (prism#830), or re-creating parts
    without the field (TanStack/ai PR #459).

Severity:
    warning. The history the client sent deviates from what Gemini documents and breaks on Gemini 3.
    An error when the capture shows this request rejected (an HTTP 4xx or an error in place of an
    answer): then the capture proves it broke.
    What if the request asked for this? The request here is the application's own next request:
    dropping the signature is its doing, not something a setting asked of Gemini.

Example:
    stream        {"functionCall":{"name":"get_weather",…},"thoughtSignature":"CiQB…"}, {"functionCall":{"name":"get_local_time",…}}
    next request  {"role":"model","parts":[{"functionCall":{"name":"get_weather",…}}, {"functionCall":{"name":"get_local_time",…}}]}

How to fix:
    Send the model turn back as it streamed: every part, in the order received, each with the
    thoughtSignature it came with (the Gen AI SDKs do this when the response's content is appended
    to the history as is).
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.conversation.pairing_problems import ThoughtSignatureNotSentBack
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.pairing._problems import answer_to, call_label
from stream_doctor.values.findings import Finding, Severity


@rule(
    "A Gemini call that streamed with a thoughtSignature is sent back without it, or moved", Severity.WARNING, reach=1
)
def check(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    for problem in conversation.problems:
        if not isinstance(problem, ThoughtSignatureNotSentBack):
            continue
        call = call_label(problem.name, problem.call_id)
        where = f"turn {problem.at.turn}'s request ({problem.at.request_path})"
        if problem.why == "dropped":
            text = f"{call} streamed with a thoughtSignature but is sent back without one in {where}"
        else:
            text = (
                f"{call} streamed as call {problem.streamed_position + 1} of its turn with the thoughtSignature, but "
                f"{where} sends it back as call {(problem.echoed_position or 0) + 1}: the signed part moved"
            )
        severity = None
        if answer_to(conversation, problem.at.turn) == "rejected":
            text += "; the capture shows the API rejected this request"
            severity = Severity.ERROR
        yield self.finding_at(
            conversation.location(problem.at),
            text,
            "Send the model turn back as it streamed: every part in order, each with its thoughtSignature",
            [(label, conversation.location(place)) for label, place in problem.related],
            problem.call_id,
            severity=severity,
        )
