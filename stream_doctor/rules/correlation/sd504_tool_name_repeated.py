"""A tool call's function name is sent again on its later fragments.

What it checks:
    OpenAI sends ``function.name`` on a call's first fragment only. This reports calls whose later
    fragments repeat the same name, with the name a concatenating accumulator would build.

Why it matters:
    Harmless to a client that sets the name once. openai-python's ``accumulate_delta``, LangChain's
    ``merge_dicts`` and pydantic-ai append the name each time and look up a tool such as
    ``final_resultfinal_resultfinal_result``, which does not exist (llama.cpp #13774, from a
    llama-server that sends the whole name in every delta; also Fireworks and LiteLLM).

Severity:
    warning. openai-python's ``accumulate_delta``, LangChain's ``merge_dicts`` and pydantic-ai
    concatenate the repeated name (llama.cpp #13774).
    What if the request asked for this? No request setting asks for the name on every fragment.

Example:
    data: {…"tool_calls":[{"index":0,"function":{"name":"search","arguments":"{\\"q"}}]…}
    data: {…"tool_calls":[{"index":0,"function":{"name":"search","arguments":"\\":1}"}}]…}

How to fix:
    Set the name once and ignore equal or empty repeats; ask the server to send it only once.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import NameRepeated
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.rules.correlation._calls import repeated
from stream_doctor.values.findings import Finding, Severity


@rule("A tool call's name is repeated on its later fragments", Severity.WARNING, reads=(NameRepeated,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for problem in problems(stream, self):
        call = stream.calls[problem.call]
        count = problem.count
        yield self.finding(
            stream,
            problem.pos,
            f"{call.label} carries its name on {count} fragments; accumulators that append the name "
            f"(openai-python's accumulate_delta, LangChain's merge_dicts, pydantic-ai) look up the tool "
            f"{repeated(str(problem.name), count)} and find none",
            "Set the name once from the first fragment and ignore equal repeats; ask the server to send it only once",
            call=call,
        )
