"""Fields that no documentation of the provider (or of the compatible server) defines.

What it checks:
    Events of a known type that carry extra fields are read as that event. Every adapter knows the
    fields its provider documents (from the provider's API reference and SDK types: Anthropic,
    OpenAI Chat and Responses, Gemini and its Interactions API, Cohere, Bedrock Converse and
    InvokeModel, Ollama, the Vercel AI SDK's streams, the SDK helper logs) and the documented
    extensions of compatible servers (Groq's ``x_groq``, OpenRouter's ``reasoning_details`` and
    ``native_finish_reason``, DeepSeek's ``reasoning_content``, vLLM's ``stop_reason``, Together's
    ``token_id``, xAI's ``citations``, LM Studio's ``stats``, Bedrock's invocation metrics …).
    Any other field is listed here by its path, once per capture (across all the turns of a
    cassette or HAR file), with where it first appeared.

Why it matters:
    Nothing breaks: clients ignore fields they do not know. But a field nobody documents may carry
    content (a tool call in a place no client reads), and a new extension should be learnt rather
    than mistaken for an unknown event.

Severity:
    info. Fields the base protocol does not define are how compatible servers extend it; every client
    named in the docs ignores fields it does not know. Counted once per capture so that a new
    extension is visible without drowning the report: a field on every fragment is one entry.

Example:
    data: {"id":"chatcmpl-…","choices":[{"index":0,"delta":{"content":"Hi","vendor_trace":{"span":"9f"}}}]}

How to fix:
    Nothing to fix in the client. If the field carries content a client should show, tell
    stream-doctor's maintainers which server sends it and where it is documented.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.util.wording import where
from stream_doctor.values.findings import Finding, Severity


@rule("Fields no provider documentation defines (listed once per capture)", Severity.INFO, reads=("unknown-field",))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    found = list(problems(stream, self))
    if not found:
        return
    listed = ", ".join(f"{p.message} ({where(p.pos)})" for p in found[:10])
    more = f" and {len(found) - 10} more" if len(found) > 10 else ""
    yield self.finding(
        stream,
        found[0].pos,
        f"{len(found)} field{'s' if len(found) > 1 else ''} that no documentation of this provider defines, "
        f"read as part of their events: {listed}{more}",
        "Nothing to fix: clients ignore fields they do not know; report the server if one carries content",
    )
