"""A later event restates a call with another id, name or input than the stream gave it.

What it checks:
    Responses ``response.output_item.done`` and the ``output`` of ``response.completed`` /
    ``response.incomplete`` restate every call. The restated ``call_id``, ``name`` and input must
    match the call as it was started and streamed (matched by ``output_index``).

Why it matters:
    Clients take a call's identity from different events: the AI SDK keeps the ``call_id`` of
    ``output_item.added``, others rebuild calls from ``response.completed``. An id that changes
    between them means one of those clients answers with an id the API does not recognise
    ("No tool call found for function call output with call_id …"); a changed input means two
    clients run two different calls.

Severity:
    warning for a changed name or input: clients that read different events run different calls.
    info for a changed ``call_id``: the widely used clients answer with the finished item's id, the
    one the response stores: the AI SDK's OpenAI Responses provider emits the call at
    ``output_item.done`` with that event's ``call_id`` (``openai-responses-language-model.ts``, the
    ``function_call`` and client ``tool_search_call`` branches; its recorded follow-up of the
    ``openai-client-tool-search`` fixture was accepted), and openai-python's stream helper builds the
    final response from ``response.completed``. Only code that keeps the ``output_item.added`` id
    answers with one the API does not know.
    What if the request asked for this? No request setting asks for the final summary to differ from
    the streamed deltas.

Example:
    response.output_item.added {"output_index":0,"item":{"type":"tool_search_call","call_id":"call_NHis…",…}}
    response.output_item.done  {"output_index":0,"item":{"type":"tool_search_call","call_id":"call_RWTI…",…}}

How to fix:
    Send the result with the id of the finished item (the one the response stores), and check
    the streamed call against the restatement instead of trusting either in silence.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import SummaryDiffers
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.util.wording import preview
from stream_doctor.values.findings import Finding, Severity

WHAT = {
    "id": (
        "with id {restated!r}, but it was started as {streamed!r}; the AI SDK and openai-python's stream "
        "helper answer with the finished item's id, the one the response stores; only a client that keeps "
        "the start event's id answers with an id the API does not know"
    ),
    "name": (
        "with name {restated!r}, but it was started as {streamed!r}; clients that read different "
        "events dispatch it to different tools"
    ),
    "arguments": (
        "with input {restated}, but the stream carried {streamed}; a client that reads the stream "
        "and one that reads the summary run different calls"
    ),
}


@rule(
    "A later event restates a call with another id, name or input than its stream",
    Severity.WARNING,
    reads=(SummaryDiffers,),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    groups: dict[tuple[int, str], list[SummaryDiffers]] = {}
    for problem in problems(stream, self):
        groups.setdefault((problem.call, problem.field), []).append(problem)
    for (ordinal, field), group in groups.items():
        first = group[0]
        call = stream.calls[ordinal]
        if field == "id":
            restated, streamed = first.call_id, first.streamed
        elif field == "name":
            restated, streamed = first.name, first.streamed
        else:
            restated, streamed = preview(first.arguments, 60), preview(first.streamed, 60)
        times = "a later event" if len(group) == 1 else f"{len(group)} later events"
        yield self.finding(
            stream,
            first.pos,
            f"{call.label} is restated by {times} "
            + WHAT.get(field, WHAT["arguments"]).format(restated=restated, streamed=streamed),
            "Answer with the id of the finished item (the one the response stores) and check the streamed "
            "call against every restatement; report the inconsistency to the provider",
            [("call started", call.started)] + [("restated again", a.pos) for a in group[1:2]],
            call,
            severity=Severity.INFO if field == "id" else Severity.WARNING,
        )
