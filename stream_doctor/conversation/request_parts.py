"""The parts of a request's facts (``model.RequestFacts``): the tools it declared, the calls it sent back,
the tool results and the messages it carries, as the request readers (``conversation/requests/``) find them.

A module of their own so that a replay of a capture without requests does not make their classes: a
dataclass's decorator compiles its methods when the class is made (``docs/performance.md``, "Start-up").
The records made for each new item of every request's history (``EchoedCall``, ``ToolResult``,
``MessageFacts``) are ``util.records.record``s, made several times a turn: frozen to mypy, their fields
stored by plain slot stores where a frozen dataclass's ``__init__`` made a call per field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from stream_doctor.util.records import record

Dialect = Literal["json-schema", "openapi"]  # openapi: Gemini's ``parameters`` (an OpenAPI 3.0 Schema subset)
Role = Literal["assistant", "user", "tool", "system", "other"]


@dataclass(frozen=True, slots=True)
class ToolDef:
    """A tool the request declared."""

    name: str
    schema: Any  # the JSON Schema of its input; None when the tool has none (a provider-defined tool)
    path: str  # where the schema (or the tool) is declared: ``tools[0].input_schema``
    dialect: Dialect = "json-schema"


@record
class EchoedCall:
    """A call in an assistant turn the client sent back in a later request."""

    call_id: str | None
    name: str | None
    input: Any  # as echoed, parsed (an arguments string is parsed); MISSING when it does not parse
    raw: str | None  # the arguments string as echoed (OpenAI-style), None when echoed as an object
    message: int  # index of its message (``messages``, ``contents``, ``input`` items)
    path: str  # ``messages[3].content[1]``
    server_side: bool = False  # a server tool's call, whose result the server supplied
    item_id: str | None = None  # Responses: the item id (``fc_…``) it was sent back with
    reference: bool = False  # Responses ``item_reference``: a call named only by its item id
    signed: bool = False  # Gemini: the functionCall part is sent back with a thoughtSignature
    part: int | None = None  # Gemini: its position among the parts of its content


@record
class ToolResult:
    """A tool result the request carries."""

    call_id: str | None  # None when the protocol matches results by name (Gemini without ids, Ollama)
    name: str | None
    message: int
    path: str
    after_other_content: bool = False  # another kind of block comes before it in its message


@record
class MessageFacts:
    message: int  # its index among the history's messages (``messages``, ``contents``, ``input`` items)
    role: Role
    path: str
    text: str | None = None  # the message's text content (all its text parts), when it has any
