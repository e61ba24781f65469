"""What it checks:
With ``--client NAME`` when the installed library ran over the capture and its model was set against
the run (``--client-mode both``, or a version installed other than the one the profile follows):
whether the model would treat a call otherwise than the library did.

Why it matters:
The run is the verdict, at the version you run; the model is what answers where the library is not
installed (CI without the ``clients`` extra, a stdin capture on another machine). Where they part,
a report made without the library would say something else about this call.

Severity:
info, because the run already gave the verdict (its own SD8xx findings); the model's difference says
nothing broke in the stream, only that the model misses a corner of the library (or of the
version installed).
    What if the request asked for this? The request does not change what the library or its model
    hands the tool.

Example:
``installed anthropic 2.12.0 (run) raises AssertionError first, where the model of anthropic-python
2.12.0 runs it with {"location":"Lisbon"} at line 37 (event 13), on content_block_stop``.

How to fix:
Nothing in the capture: trust the run. If the installed version is not the profile's, the library
changed its handling; otherwise report the capture to stream-doctor so the model learns the corner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from stream_doctor.rules.base import rule
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.clients.compare import ClientReview
    from stream_doctor.rules.base import Rule


@rule("The model of a client differs from the installed library's run", Severity.INFO)
def check(review: ClientReview, self: Rule) -> Iterable[Finding]:
    provenance = review.provenance
    if provenance is None or not provenance.model_differs:
        return
    advice = "The run is the verdict; a report without the library installed would give the model's."
    for ordinal, said in provenance.model_differs:
        call = review.call(ordinal)
        related = [("call completed", call.ended)]
        yield self.finding(review.stream, call.started, said, advice, related, call)
