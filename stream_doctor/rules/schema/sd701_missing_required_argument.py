"""A call's arguments lack a property the tool's schema requires.

What it checks:
    Each completed call's parsed arguments are validated (with jsonschema, in the draft the
    schema declares) against the schema its tool declared in the request that produced the
    stream (Anthropic ``input_schema``, OpenAI ``function.parameters``, Responses
    ``parameters``, Gemini ``parameters`` / ``parametersJsonSchema``, Bedrock
    ``toolSpec.inputSchema.json``, Cohere ``function.parameters``), or in ``--tools FILE`` for a
    bare stream. Each missing required property is reported with its JSON path and the schema
    rule that requires it.

Why it matters:
    The tool cannot run as asked: validation fails, or the tool runs with a default the model
    did not choose. With fine-grained tool streaming a value can swallow the properties after it
    (pi-anthropic-oauth #11): the buffer parses, but required keys are gone.

Severity:
    error. The call as built cannot run as its tool declares: validation fails (pydantic-ai, the AI
    SDK's ``inputSchema``) or a default the model did not choose is used.

Example:
    schema     {"required":["path","edits"],…}
    arguments  {"edits":[{"oldText":"…\\"}],\\"path\\":\\"src/cache.ts\\"…"}]}   (path swallowed)

How to fix:
    If the stream is at fault (truncation, a swallowed field), do not run the call: send an error
    result asking the model to retry. If the model omits the property, make the schema's
    description say why it is needed, or turn on strict tool use.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.schema._calls import violation_findings
from stream_doctor.values.findings import Finding, Severity


@rule("A call's arguments lack a property its tool's schema requires", Severity.ERROR)
def check(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    return violation_findings(
        conversation,
        self,
        {"required"},
        "Do not run the call as is: return an error result naming the missing property so the model retries",
    )
