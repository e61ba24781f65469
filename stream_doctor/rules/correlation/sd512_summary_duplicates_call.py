"""A terminal event restates a streamed call under another id: the same call twice.

What it checks:
    A call restated by a terminal event (``response.output_item.done``, ``response.completed``)
    that matches no streamed call by position or id, but has the name and input of a call the
    stream did produce.

Why it matters:
    A client that collects calls from the stream and from the final response, and merges them by
    id, ends up with two calls and runs the tool twice (vercel/ai #3953, agno #2336: streaming
    ids like ``fc_tmp_…`` against final ``call_…`` ids). Deduplicating by (name, input) instead
    drops legitimate twins, so the fix belongs in how the two are matched.

Severity:
    warning. Clients that merge stream and final response by id run the tool twice (vercel/ai #3953,
    agno #2336).
    What if the request asked for this? No request setting asks for a call to be repeated in the
    summary.

Example:
    response.output_item.added {"output_index":0,"item":{"type":"function_call","call_id":"call_a1",…}}
    … the call streams and completes …
    response.completed {"response":{"output":[{"type":"function_call","call_id":"call_zz",…same input…}]}}

How to fix:
    Match the final response's items to streamed calls by position (``output_index``) before id,
    and run each call once. Report the provider or gateway that rewrites ids.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import SummaryDuplicate
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.util.wording import preview
from stream_doctor.values.findings import Finding, Severity


@rule("A terminal event restates a streamed call under another id", Severity.WARNING, reads=(SummaryDuplicate,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for problem in problems(stream, self):
        twin = stream.calls[problem.call]
        yield self.finding(
            stream,
            problem.pos,
            f"a terminal event lists {problem.name or '?'} ({problem.call_id or 'no id'}) with "
            f"{preview(problem.arguments, 60)}, the same call as the streamed {twin.label}; a client that "
            f"merges the stream and the final response by id runs this tool twice",
            "Match final items to streamed calls by position first, not only by id, and run each call once",
            [("streamed call", twin.started)],
            twin,
        )
