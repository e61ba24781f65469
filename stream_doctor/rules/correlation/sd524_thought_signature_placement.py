"""Only some function calls of a Gemini turn carry a ``thoughtSignature``.

What it checks:
    Gemini thinking models (Gemini 3, 2.5) attach a ``thoughtSignature`` to the first
    ``functionCall`` part of a step; later parallel calls of the same step have none
    (https://ai.google.dev/gemini-api/docs/thought-signatures). Info when that is the case,
    to say what the next request must do; a warning when the first call itself has no signature
    although the turn carries signatures.

Why it matters:
    The next request must send the model turn back with its signatures, or Gemini 3 answers 400
    "Function call is missing a thought_signature in functionCall parts" (prism#830, TanStack/ai
    PR #459). Clients that store a signature per call and rebuild the turn in another order, split
    parallel calls into separate turns, or drop calls without a signature, break only once a turn
    has several calls. Without a signature on the first call, the turn cannot be sent back as is.

Severity:
    info when only the first of parallel calls carries a signature: that is what Gemini documents,
    and only clients that rebuild the turn in another order or drop the unsigned parts break. A
    warning when the first call lacks one while later calls carry them: sent back as is, Gemini 3
    answers 400 "Function call is missing a thought_signature" (not an error until a follow-up shows
    the rejection).
    Whether the capture's follow-up request really drops or moves the signed part is SD610's
    question (a warning when it does): this rule only says what the next request must do.
    What if the request asked for this? The request's thinking configuration decides whether
    signatures come at all, and a response with none is silent here; no setting asks for the first
    of parallel calls to go without one while later calls carry them.

Example:
    {"functionCall":{"name":"get_weather","args":{…}},"thoughtSignature":"EqUC…"}
    {"functionCall":{"name":"get_time","args":{…}}}

How to fix:
    Send the model turn back unchanged: every part, in the order received, each with the
    signature it came with. If the first call really has none, the documented escape is a dummy
    signature (``skip_thought_signature_validator``), at the cost of the model's reasoning context.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import ThoughtSignatures
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.values.findings import Finding, Severity

ERROR_400 = '400 "Function call is missing a thought_signature in functionCall parts"'


@rule(
    "Only some function calls of a Gemini turn carry a thoughtSignature",
    Severity.INFO,
    reads=("thought-signature-first-only", "thought-signature-missing"),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for problem in problems(stream, self):
        if problem.kind == "thought-signature-first-only":
            yield self.finding(
                stream,
                problem.pos,
                f"{signatures(problem.facts) if isinstance(problem.facts, ThoughtSignatures) else problem.message}. The next request must send all the "
                f"parts back in this order in one model turn, the signature on the first call: a client that "
                f"stores signatures per call and reorders the calls, splits them into separate turns, or drops "
                f"the unsigned ones gets {ERROR_400}",
                "Send the model turn back unchanged: every part, in order, with the signatures it came with",
            )
        elif problem.kind == "thought-signature-missing":
            yield self.finding(
                stream,
                problem.pos,
                f"{signatures(problem.facts) if isinstance(problem.facts, ThoughtSignatures) else problem.message}: sent back as is, the turn gets {ERROR_400}, since Gemini 3 checks the "
                f"first call of each step",
                "Re-send the turn with its parts unchanged; if the first call really lacks one, use the "
                "documented dummy signature skip_thought_signature_validator",
                severity=Severity.WARNING,
            )


def signatures(facts: ThoughtSignatures) -> str:
    """Which calls carry a thoughtSignature: the first without one, or the later ones without."""
    if not facts.first_signed:
        where = facts.signed or "another part of the turn"
        return f"the first function call, {facts.first}, has no thoughtSignature, although {where} carries one"
    count = len(facts.unsigned)
    names = ", ".join(facts.unsigned[:5]) + (", …" if count > 5 else "")
    later = f"{count} later call{'' if count == 1 else 's'} {'has' if count == 1 else 'have'}"
    return (
        f"only the first function call, {facts.first}, carries a thoughtSignature, as Gemini does for "
        f"parallel calls; {later} none: {names}"
    )
