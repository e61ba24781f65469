"""A call's argument has a type its tool's schema does not allow.

What it checks:
    Like SD701, each completed call's arguments are validated against its tool's schema; every
    ``type`` violation is reported with the argument's JSON path, the value's type and the types
    the schema allows.

Why it matters:
    A number sent as a string, an object sent as its JSON text (double encoding), ``null`` for a
    required string: the tool fails or, worse, coerces the value. Double-encoded objects come from
    clients and gateways that serialise arguments twice.

Severity:
    error. The call as built has a value of a type the tool does not accept: validating clients
    reject it, others coerce it.

Example:
    schema     {"properties":{"days":{"type":"integer"}}}
    arguments  {"city":"Paris","days":"three"}

How to fix:
    Validate arguments before running the tool and return the validation error to the model; if
    the value is JSON text where an object belongs, find the layer that encoded it twice.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.schema._calls import violation_findings
from stream_doctor.values.findings import Finding, Severity


@rule("A call's argument has a type its tool's schema does not allow", Severity.ERROR)
def check(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    return violation_findings(
        conversation,
        self,
        {"type"},
        "Validate arguments before running the tool and send the validation error back to the model",
    )
