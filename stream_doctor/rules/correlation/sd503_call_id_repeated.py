"""A tool call's id is sent again on its later fragments.

What it checks:
    OpenAI sends a call's ``id`` on its first fragment only. This reports calls whose later
    fragments repeat the same id, with the id a concatenating accumulator would build.

Why it matters:
    Harmless to a client that sets the id once. openai-python's ``accumulate_delta`` concatenates
    every string field it sees again, so the id becomes ``call_abccall_abc…``; OpenAI then rejects
    the next request ("Invalid 'messages[10].tool_calls[0].id': string too long. Expected a string
    with maximum length 40", archestra-ai/archestra PR #866). Clients that start a new call
    whenever a fragment carries an id split the call into pieces (litellm #20480). Seen from
    Fireworks, the LiteLLM proxy, vLLM and DeepSeek/Qwen gateways (SillyTavern PR #5948).

Severity:
    warning. openai-python's ``accumulate_delta`` concatenates the repeated id, and OpenAI rejects
    the result (archestra-ai/archestra PR #866); clients that set the id once are unaffected.
    What if the request asked for this? No request setting asks for the id on every fragment; where
    the protocol sends it so (``ids_repeat_on_fragments``) the rule is silent.

Example:
    data: {…"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"search","arguments":"{\\"q"}}]…}
    data: {…"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"arguments":"\\":1}"}}]…}

How to fix:
    Set a call's id once, from its first fragment, and ignore equal or empty repeats. Ask the
    server or gateway to send the id on the first fragment only.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import IdRepeated
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.rules.correlation._calls import repeated
from stream_doctor.values.findings import Finding, Severity

#: OpenAI's limit on tool_call ids in the next request (archestra-ai/archestra PR #866).
OPENAI_ID_LIMIT = 40


@rule("A tool call's id is repeated on its later fragments", Severity.WARNING, reads=(IdRepeated,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    if stream.capture.protocol.ids_repeat_on_fragments:
        return
    for problem in problems(stream, self):
        call = stream.calls[problem.call]
        count = problem.count
        call_id = str(problem.call_id)
        message = (
            f"{call.label} carries its id on {count} fragments; an accumulator that concatenates string fields "
            f"(openai-python's accumulate_delta) builds the id {repeated(call_id, count)}"
        )
        if len(call_id) * count > OPENAI_ID_LIMIT:
            message += f", longer than the {OPENAI_ID_LIMIT} characters OpenAI accepts in the next request"
        message += "; a client that starts a call at every fragment with an id splits it"
        yield self.finding(
            stream,
            problem.pos,
            message,
            "Set the id once from the first fragment and ignore equal repeats; ask the server to send it only once",
            call=call,
        )
