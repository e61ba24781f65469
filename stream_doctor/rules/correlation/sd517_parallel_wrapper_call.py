"""A call to the model's internal ``parallel`` wrapper leaked into the stream.

What it checks:
    A completed call named ``parallel`` (or ``multi_tool_use.parallel``) whose arguments are
    ``{"tool_uses": [{"recipient_name": "functions.X", "parameters": {…}}, …]}``: several calls
    packed into one by the model's own parallel-call tool.

Why it matters:
    No declared tool is called ``parallel``. A client that runs calls as they come looks up a tool
    that does not exist and returns an error to the model, or worse, calls a user tool of that
    name with the wrong input; the calls inside are never run. Azure gpt-5.4 on the Responses API
    sometimes emits it; the AI SDK unpacks it unless a user tool is named ``parallel``
    (vercel/ai #19098).

Severity:
    warning. No declared tool is called ``parallel``: clients without the AI SDK's unpacking
    (vercel/ai #19098) look up a tool that does not exist.
    What if the request asked for this? ``parallel_tool_calls: false`` keeps the model from wrapping
    calls in ``multi_tool_use.parallel``; with it allowed, the wrapper is still no tool the request
    declared, which is what breaks clients.

Example:
    response.output_item.added {"item":{"type":"function_call","name":"parallel",…}}
    response.function_call_arguments.done {"arguments":"{\"tool_uses\":[{\"recipient_name\":\"functions.weather\",…}]}"}

How to fix:
    When no declared tool is named ``parallel``, unpack ``tool_uses`` into one call per element
    (``recipient_name`` without the ``functions.`` prefix, ``parameters`` as the input) and answer
    the wrapper call as a whole, or ask the provider to stop leaking it.
"""

from __future__ import annotations

from typing import Any, Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.util.wording import preview
from stream_doctor.values.findings import Finding, Severity


def wrapped_calls(arguments: Any) -> list[tuple[str, Any]] | None:
    """The ``(recipient_name, parameters)`` pairs of a parallel wrapper's input, or None if it is not one."""
    if not isinstance(arguments, dict) or set(arguments) != {"tool_uses"}:
        return None
    uses = arguments["tool_uses"]
    if not isinstance(uses, list) or not uses:
        return None
    pairs = []
    for use in uses:
        if not isinstance(use, dict) or not isinstance(use.get("recipient_name"), str):
            return None
        pairs.append((use["recipient_name"], use.get("parameters")))
    return pairs


#: The names the model's parallel wrapper is called by (``--redact`` keeps them: the finding is the name).
WRAPPER_NAMES = ("parallel", "multi_tool_use.parallel")


@rule("A call to the model's internal parallel wrapper packs several calls into one", Severity.WARNING)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for call in stream.calls:
        if call.status != "complete" or call.name not in WRAPPER_NAMES:
            continue
        pairs = wrapped_calls(call.arguments)
        if pairs is None:
            continue
        inner = ", ".join(f"{name.removeprefix('functions.')} {preview(params, 40)}" for name, params in pairs)
        yield self.finding(
            stream,
            call.ended,
            f"{call.label} is the model's parallel wrapper, not a declared tool: it packs {len(pairs)} call"
            f"{'s' if len(pairs) != 1 else ''} ({inner}); a client that runs it as a tool finds no tool "
            f"called {call.name} and none of the {len(pairs)} calls runs",
            "Unpack tool_uses into one call each (recipient_name without 'functions.', parameters as input) "
            "unless you declared a tool with this name, as the AI SDK does (vercel/ai #19098)",
            [("call started", call.started)],
            call,
        )
