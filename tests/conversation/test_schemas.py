"""Tool schemas: the draft a schema declares, Gemini's OpenAPI subset, violations with their JSON paths."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.sessions import session
from stream_doctor import replay
from stream_doctor.conversation import schemas
from stream_doctor.conversation.model import ToolDef
from stream_doctor.conversation.schemas import Violation, normalized, required, schema_problem, violations

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "unit": {"enum": ["c", "f"]}},
    "required": ["city", "days"],
    "additionalProperties": False,
}


def test_violations_carry_keyword_json_path_and_schema_pointer() -> None:
    tool = ToolDef("forecast", SCHEMA, "tools[0].input_schema")
    found = violations(tool, {"days": "three", "unit": "k", "extra": 1})
    assert [(v.keyword, v.json_path, v.schema_path) for v in found] == [
        ("additionalProperties", "$", "/additionalProperties"),
        ("required", "$.city", "/required"),
        ("type", "$.days", "/properties/days/type"),
        ("enum", "$.unit", "/properties/unit/enum"),
    ]
    assert violations(tool, {"city": "Oslo", "days": 3}) == []


def test_the_declared_draft_is_used() -> None:
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}},
    }
    assert [v.keyword for v in violations(ToolDef("t", draft4, "p"), {"n": 0})] == ["minimum"]
    assert schema_problem(ToolDef("t", draft4, "p")) is None


def test_gemini_openapi_parameters_become_json_schema() -> None:
    tool = ToolDef(
        "t",
        {
            "type": "OBJECT",
            "properties": {
                "n": {"type": "INTEGER", "nullable": True},
                "xs": {"type": "ARRAY", "items": {"type": "STRING"}, "maxItems": "2"},
            },
            "required": ["n"],
        },
        "p",
        "openapi",
    )
    assert normalized(tool) == {
        "type": "object",
        "properties": {
            "n": {"type": ["integer", "null"]},
            "xs": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        },
        "required": ["n"],
    }
    assert required(tool) == ["n"]
    assert violations(tool, {"n": None}) == []
    assert [v.keyword for v in violations(tool, {"n": 1, "xs": ["a", "b", "c"]})] == ["maxItems"]


def test_invalid_schemas_are_reported_not_raised() -> None:
    tool = ToolDef("t", {"type": "object", "properties": {"days": {"type": "int"}}}, "p")
    assert "is not valid" in (schema_problem(tool) or "")
    assert violations(tool, {"days": 1}) == []
    assert schema_problem(ToolDef("t", ["not", "a", "schema"], "p")) is not None
    assert schema_problem(ToolDef("t", {"$ref": "https://example.invalid/schema.json"}, "p")) is None
    assert violations(ToolDef("t", {"$ref": "https://example.invalid/schema.json"}, "p"), {}) == []


def test_each_call_is_validated_once_for_the_three_schema_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """SD701, SD702 and SD703 read one validation of each call (``Conversation.violations``); a replay
    that selects none of them validates nothing."""
    validated: list[Any] = []

    def counted(tool: ToolDef, arguments: Any, limit: int = 10) -> list[Violation]:
        validated.append(arguments)
        return violations(tool, arguments, limit)

    monkeypatch.setattr(schemas, "violations", counted)
    streamed = b'{\\"path\\":\\"notes/turn-3.md\\"'  # as the third call's first fragment carries it
    data = session("anthropic", 4).replace(streamed, streamed.replace(b"path", b"file"))
    report = replay(data, select=["SD701", "SD702", "SD703"])
    assert len(validated) == 4 and "path" not in validated[2]  # each call validated once
    assert [f.code for f in report.findings] == ["SD701"]
    validated.clear()
    assert replay(data, select=["SD704"]).findings == () and validated == []
