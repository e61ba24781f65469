"""Tool schemas: the draft a schema declares, Gemini's OpenAPI subset, violations with their JSON paths."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.sessions import session
from stream_doctor import replay
from stream_doctor.conversation import schemas
from stream_doctor.conversation.request_parts import ToolDef
from stream_doctor.conversation.schemas import Violation, normalized, required, schema_problem, violations
from stream_doctor.values.findings import Severity

ROOT = Path(__file__).resolve().parents[2]

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


#: ways a schema nests: each wraps the one inside it
WRAPS: dict[str, Callable[[Any], Any]] = {
    "anyOf": lambda inner: {"anyOf": [inner]},
    "allOf": lambda inner: {"allOf": [inner, {}]},
    "not": lambda inner: {"not": {"not": inner}},
    "properties": lambda inner: {"type": "object", "properties": {"a": inner}, "required": ["a"]},
    "items": lambda inner: {"type": "array", "items": inner},
}


def _nested(depth: int, wraps: list[str], leaf: Any) -> Any:
    schema = leaf
    for level in range(depth):
        schema = WRAPS[wraps[level % len(wraps)]](schema)
    return schema


@pytest.mark.slow  # hypothesis, schemas up to 700 levels: about 4 s of CPU
@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(
    st.integers(0, 700),
    st.lists(st.sampled_from(sorted(WRAPS)), min_size=1, max_size=3),
    st.sampled_from(["json-schema", "openapi"]),
)
def test_a_schema_nested_at_any_depth_is_checked_or_said_too_deep_never_raised(
    depth: int, wraps: list[str], dialect: str
) -> None:
    """However deep a valid schema nests, it is checked or said too deep to check (not called invalid, and
    nothing raised); a schema of a few levels is always checked."""
    tool = ToolDef("f", _nested(depth, wraps, {"type": "string"}), "tools[0].input_schema", dialect)  # type: ignore[arg-type]
    problem = schema_problem(tool)
    assert problem in (None, schemas.TOO_DEEP)
    assert isinstance(violations(tool, {"a": 1}), list) and isinstance(required(tool), list)
    if depth <= 30:
        assert problem is None


def test_an_invalid_schema_a_few_levels_down_is_still_invalid() -> None:
    """The near miss: depth alone does not hide a real fault."""
    tool = ToolDef("f", _nested(20, ["properties"], {"type": "int"}), "tools[0].input_schema")
    problem = schema_problem(tool)
    assert problem is not None and problem != schemas.TOO_DEEP and "'int' is not valid" in problem


@pytest.mark.parametrize(("depth", "deep"), [(300, True), (40, False)])
def test_a_capture_whose_schema_nests_too_deeply_keeps_its_other_findings(
    tmp_path: Path, depth: int, deep: bool
) -> None:
    """A tool schema of 300 levels is an info SD706 ("was not checked"), and the other tool's calls are
    still validated (SD701); at 40 levels it is checked as any schema (SD702 on its own call)."""
    cassette = yaml.safe_load((ROOT / "fixtures/conversations/anthropic_schema_violations.yaml").read_text())
    request = cassette["interactions"][0]["request"]
    body = json.loads(request["body"])
    body["tools"][0]["input_schema"]["properties"]["city"] = _nested(depth, ["anyOf"], {"type": "string"})
    request["body"] = json.dumps(body)
    capture = tmp_path / "deep.yaml"
    capture.write_text(yaml.safe_dump(cassette))
    report = replay(str(capture))
    sd706 = [f for f in report.findings if f.code == "SD706"]
    assert "SD701" in report.codes
    if deep:
        assert [(f.severity, f.kind) for f in sd706] == [(Severity.INFO, "too deep")]
        assert "get_forecast" in sd706[0].message and "was not checked" in sd706[0].message
    else:
        assert sd706 == [] and "SD702" in report.codes


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openai-responses"])
def test_a_sessions_tool_is_written_out_once_and_each_tool_checked_against_its_own(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every request of a session declares the same tools (the reader makes them the previous request's
    very objects): the schema is made a validator's key once, not at each of its calls."""
    keyed: list[Any] = []
    validated: list[Any] = []
    key, validate = schemas._key, schemas.violations

    def counted(schema: Any) -> bytes:
        keyed.append(schema)
        return key(schema)

    def validating(tool: ToolDef, arguments: Any, limit: int = 10) -> list[Violation]:
        validated.append(arguments)
        return validate(tool, arguments, limit)

    monkeypatch.setattr(schemas, "_key", counted)
    monkeypatch.setattr(schemas, "violations", validating)
    replay(session(provider, 6))
    assert (len(validated), len(keyed)) == (6, 1)  # one tool, write_file, checked at six calls
    # the near miss: two tools of equal names and paths, checked in turn, each against its own schema
    strict = ToolDef("forecast", SCHEMA, "p")
    loose = ToolDef("forecast", {"type": "object"}, "p")
    for _ in range(2):
        assert [v.keyword for v in violations(strict, {"city": 1, "days": 2})] == ["type"]
        assert violations(loose, {"city": 1, "days": 2}) == []


@pytest.mark.parametrize("provider", ["anthropic", "openai-responses"])
def test_a_sessions_tool_has_its_required_properties_read_once(provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """SD705 reads what each tool requires once a replay, not at each call (a session's turns declare the
    very same tool objects), and still finds the hazard at every call; the near miss: a request that
    declares the tool anew (its schema edited) has the new tool read, and its call judged by it."""
    read: list[list[str]] = []

    def counted(tool: ToolDef) -> list[str]:
        read.append(required(tool))
        return read[-1]

    monkeypatch.setattr(schemas, "required", counted)
    data = session(provider, 6)
    report = replay(data, select=["SD705"])
    assert [f.code for f in report.findings] == ["SD705"] * 6 and read == [["path", "content"]]
    read.clear()
    lines = data.split(b"\n")
    third = [n for n, line in enumerate(lines) if line.startswith(b'{"sd":"request"')][2]
    lines[third] = lines[third].replace(b'"required":["path","content"]', b'"required":["content","path"]')
    report = replay(b"\n".join(lines), select=["SD705"])
    # turn 3's tool is another object, and so is the next turns' (their schema differs from turn 3's)
    assert read == [["path", "content"], ["content", "path"], ["path", "content"]]
    said = [f.message.partition("every required property ")[2].partition(")")[0] for f in report.findings]
    assert said == ["(path, content"] * 2 + ["(content, path"] + ["(path, content"] * 3


# -- the plain object: what it says valid, jsonschema says valid ------------------------------------------------

JSON_TYPES = ["string", "integer", "number", "boolean", "null", "array", "object"]
NAMES = ["a", "b", "c"]
DRAFTS = [
    "http://json-schema.org/draft-04/schema#",
    "http://json-schema.org/draft-06/schema#",
    "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2020-12/schema",
]
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.0, 1.0, -2.0, 0.5])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=2),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner, max_size=2),
    max_leaves=5,
)
#: a value of one JSON type, as orjson reads it
VALUE_OF = {
    "string": st.text(max_size=3),
    "integer": st.integers(-3, 3),
    "number": st.integers(-3, 3) | st.floats(allow_nan=False, allow_infinity=False),
    "boolean": st.booleans(),
    "null": st.none(),
    "array": st.lists(json_values, max_size=2),
    "object": st.dictionaries(st.text(max_size=2), json_values, max_size=2),
}
annotations = st.fixed_dictionaries({}, optional={"description": st.just("d"), "title": st.just("t")})
plain_property = st.tuples(
    annotations,
    st.none()
    | st.sampled_from(JSON_TYPES)
    | st.lists(st.sampled_from(JSON_TYPES), min_size=1, max_size=3, unique=True),
).map(lambda pair: pair[0] if pair[1] is None else {**pair[0], "type": pair[1]})
#: one keyword more makes a schema no plain object: jsonschema alone judges it
PROPERTY_KEYWORDS = [
    {"minLength": 1},
    {"enum": [1, "a", None]},
    {"const": 0},
    {"minimum": 0},
    {"items": {"type": "string"}},
    {"maxItems": 1},
    {"pattern": "^a"},
    {"format": "date"},
    {"properties": {"a": {"type": "integer"}}, "required": ["a"]},
    {"anyOf": [{"type": "string"}, {"type": "integer"}]},
]
TOP_KEYWORDS = [
    {"minProperties": 1},
    {"maxProperties": 1},
    {"patternProperties": {"^a": {"type": "string"}}},
    {"propertyNames": {"maxLength": 0}},
    {"not": {"required": ["a"]}},
    {"type": ["object", "null"]},
    {"additionalProperties": {"type": "string"}},
    {"dependentRequired": {"a": ["b"]}},
    {"$schema": "http://json-schema.org/draft-03/schema#"},
]


@st.composite
def plain_schemas(draw: st.DrawFn, closable: bool = True) -> dict[str, Any]:
    """A schema ``plain_object`` reads whole: an object of typed (or any) properties, some required."""
    properties = draw(st.dictionaries(st.sampled_from(NAMES), plain_property, max_size=3))
    schema: dict[str, Any] = draw(annotations)
    if draw(st.booleans()):
        schema["type"] = "object"
    if properties or draw(st.booleans()):
        schema["properties"] = properties
    names = list(properties) if not closable else NAMES + ["d"]
    required = draw(st.lists(st.sampled_from(names), unique=True, max_size=3)) if names else []
    if required or draw(st.booleans()):
        schema["required"] = required
    if closable and draw(st.booleans()):
        schema["additionalProperties"] = draw(st.booleans())
    if draw(st.booleans()):
        schema["$schema"] = draw(st.sampled_from(DRAFTS))
    return schema


@st.composite
def schemas_in_and_just_outside(draw: st.DrawFn) -> tuple[dict[str, Any], bool]:
    """A plain object schema, or one a keyword away from it (at its top or in a property): and which."""
    schema = draw(plain_schemas())
    where = draw(st.sampled_from(["plain", "top", "property"]))
    if where == "top":
        return {**schema, **draw(st.sampled_from(TOP_KEYWORDS))}, False
    if where == "property":
        name = draw(st.sampled_from(NAMES))
        inner = schema.get("properties", {}).get(name, {})
        widened = {**inner, **draw(st.sampled_from(PROPERTY_KEYWORDS))}
        return {**schema, "properties": {**schema.get("properties", {}), name: widened}}, False
    return schema, True


#: values at the edges of the JSON types as Python holds them (a bool is an int, a whole float reads as one)
EDGES = [True, False, 0, 1, 1.0, 0.5, -2.0, "1", "", None, [], [1], {}, {"a": 1}]
arguments_values = (
    json_values
    | st.dictionaries(st.sampled_from(NAMES + ["d", "e"]), json_values, max_size=5)
    | st.dictionaries(st.sampled_from(NAMES + ["d"]), st.sampled_from(EDGES), max_size=4)
)


def _near(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Values close to valid for ``schema``: its properties, each of one of its types or an edge value."""
    typed = []
    for name, inner in sorted(schema.get("properties", {}).items()):
        kinds = inner.get("type") if isinstance(inner, dict) else None
        kinds = [kinds] if isinstance(kinds, str) else kinds or []
        own = st.sampled_from(kinds).flatmap(lambda kind: VALUE_OF.get(kind, json_values)) if kinds else json_values
        typed.append(st.tuples(st.just(name), own | st.sampled_from(EDGES)))
    extra = st.tuples(st.sampled_from(NAMES + ["d"]), st.sampled_from(EDGES))
    return st.lists(st.one_of(*typed, extra) if typed else extra, max_size=4).map(dict)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(schemas_in_and_just_outside(), st.data())
def test_a_plain_object_says_valid_only_where_jsonschema_does(
    schema_and_plain: tuple[Any, bool], data: st.DataObject
) -> None:
    """``PlainObject.holds`` answers for jsonschema where a call's schema is the common plain shape: it may
    say valid only where jsonschema finds nothing, and a schema a keyword outside the shape is not one."""
    schema, plain = schema_and_plain
    validator, problem, shape = schemas._compiled(schemas._key(schema))
    if validator is None:  # a schema jsonschema refuses (draft 3's ``required`` is no list): never validated
        assert shape is None
        return
    assert (shape is not None) == plain
    # a value drawn, and one close to valid with each property set to each edge value in turn
    close = data.draw(_near(schema))
    values = [data.draw(arguments_values), close]
    values += [{**close, name: edge} for name in schema.get("properties", {}) for edge in EDGES]
    tool = ToolDef("t", schema, "p")
    for value in values:
        valid = next(validator.iter_errors(value), None) is None
        if shape is not None and shape.holds(value):
            assert valid, value
        # and what a rule reads is jsonschema's verdict, whichever answered
        assert (violations(tool, value) == []) == valid


@st.composite
def plain_schemas_and_valid_values(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    schema = draw(plain_schemas(closable=False))
    properties = schema.get("properties", {})
    chosen = set(schema.get("required", [])) | draw(st.sets(st.sampled_from(NAMES)))
    value: dict[str, Any] = {}
    for name in sorted(chosen):
        kinds = properties.get(name, {}).get("type")
        kind = draw(st.sampled_from([kinds] if isinstance(kinds, str) else kinds)) if kinds else None
        value[name] = draw(VALUE_OF[kind] if kind else json_values)
    return schema, value


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(plain_schemas_and_valid_values())
def test_a_plain_object_says_valid_where_it_applies(schema_and_value: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """The near side of the test above: every value built to a plain schema (each property of its type, every
    required one there) is valid, and the plain object says so without jsonschema's walk."""
    schema, value = schema_and_value
    validator, _, shape = schemas._compiled(schemas._key(schema))
    if validator is None:  # draft 4 refuses an empty ``required``
        assert schema.get("required") == [] and "draft-04" in schema["$schema"]
        return
    assert shape is not None and shape.holds(value)
    assert next(validator.iter_errors(value), None) is None


def test_a_valid_call_of_a_plain_schema_is_not_walked_and_an_invalid_one_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session's calls (a plain schema, valid arguments) never reach jsonschema's walk; the near miss:
    arguments of the wrong type are walked, and reported as before."""
    import jsonschema

    walked: list[Any] = []
    walk = jsonschema.Draft202012Validator.iter_errors

    def counted(self: Any, instance: Any, *args: Any, **kwargs: Any) -> Any:
        if "$id" not in self.schema:  # not the metaschema's check of a tool's schema
            walked.append(instance)
        return walk(self, instance, *args, **kwargs)

    monkeypatch.setattr(jsonschema.Draft202012Validator, "iter_errors", counted)
    assert replay(session("openai-responses", 5), select=["SD701", "SD702", "SD703"]).findings == ()
    assert walked == []
    tool = ToolDef(
        "write_file", {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}, "p"
    )
    (found,) = violations(tool, {"path": 1})
    assert (found.keyword, found.json_path, found.message) == ("type", "$.path", "1 is not of type 'string'")
    assert violations(tool, {}) != [] and len(walked) == 2
