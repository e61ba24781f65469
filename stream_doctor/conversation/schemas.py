"""Tool schemas: a call's arguments against the JSON Schema its tool declared.

jsonschema is imported here, and this module only when a schema is actually validated: a replay
of a capture without tool definitions never pays for it. Each schema is checked with the draft it
declares (``$schema``), 2020-12 when it declares none. Gemini's ``parameters`` are an OpenAPI 3.0
Schema subset (``"type": "OBJECT"``, ``nullable``, 64-bit integers as strings); they are turned
into the JSON Schema they mean before validating.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import orjson

from stream_doctor.util import jsontext

if TYPE_CHECKING:  # a type only: model imports this module when a call is validated
    from stream_doctor.conversation.request_parts import ToolDef

_INTEGER_KEYWORDS = ("minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties")
_REQUIRED = re.compile(r"^(.*) is a required property$")
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: JSON Schema's types as the exact Python types of a parsed JSON value: ``True`` is no number (as JSON Schema
#: says), and a whole float (``1.0``), which drafts 6 on count as an integer, is left to jsonschema.
_PLAIN_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
    "array": (list,),
    "object": (dict,),
}
#: The keywords a ``PlainObject`` schema may use, at its top and in each property's schema; none other.
_PLAIN_TOP = frozenset(("$schema", "type", "properties", "required", "additionalProperties", "title", "description"))
_PLAIN_PROPERTY = frozenset(("type", "title", "description"))


@dataclass(frozen=True, slots=True)
class Violation:
    keyword: str  # the schema keyword that failed: required, type, enum, additionalProperties …
    json_path: str  # where in the arguments: ``$.edits[0].newText``
    message: str  # jsonschema's words
    schema_path: str  # JSON pointer into the tool's schema: ``/properties/edits/items/required``


@dataclass(frozen=True, slots=True)
class PlainObject:
    """A schema of the shape most tools declare, understood whole: an object whose properties each have
    one JSON type, a list of them, or any; some required, and others forbidden when it is ``closed``
    (``additionalProperties: false``). ``holds`` says only that a value is valid, as jsonschema would:
    False means "ask jsonschema", which stays the judge of every other value and the source of every
    message (``plain_object`` makes one only of a schema whose every keyword it reads)."""

    types: dict[str, tuple[type, ...] | None]  # each property's Python types (None: any value)
    required: tuple[str, ...]
    closed: bool

    def holds(self, value: Any) -> bool:
        if type(value) is not dict:
            return False
        for name in self.required:
            if name not in value:
                return False
        types = self.types
        for name, item in value.items():
            if name not in types:
                if self.closed:
                    return False
                continue
            kinds = types[name]
            if kinds is not None and type(item) not in kinds:
                return False
        return True


def plain_object(schema: Any) -> PlainObject | None:
    """The schema as a ``PlainObject`` when it is one (a schema jsonschema accepts, in draft 4 or later:
    ``_compiled`` asks), else None."""
    if type(schema) is not dict or not schema.keys() <= _PLAIN_TOP or schema.get("type", "object") != "object":
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    closed = schema.get("additionalProperties", True)
    if type(properties) is not dict or type(required) is not list or type(closed) is not bool:
        return None
    if not all(type(name) is str for name in required):
        return None
    types: dict[str, tuple[type, ...] | None] = {}
    for name, property_schema in properties.items():
        if type(property_schema) is not dict or not property_schema.keys() <= _PLAIN_PROPERTY:
            return None
        kinds = property_schema.get("type")
        names = [kinds] if type(kinds) is str else kinds
        if names is None:
            types[name] = None
        elif type(names) is list and all(type(kind) is str and kind in _PLAIN_TYPES for kind in names):
            types[name] = tuple(t for kind in names for t in _PLAIN_TYPES[kind])
        else:
            return None
    return PlainObject(types, tuple(required), not closed)


def normalized(tool: ToolDef) -> Any:
    """The tool's schema as JSON Schema."""
    return _from_openapi(tool.schema) if tool.dialect == "openapi" else tool.schema


def required(tool: ToolDef) -> list[str]:
    """The top-level properties the schema requires (none when it is not an object schema, or nests too
    deeply to convert: ``TOO_DEEP``)."""
    try:
        schema = normalized(tool)
    except RecursionError:
        return []
    if not isinstance(schema, dict):
        return []
    names = schema.get("required")
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


#: Why a schema was not checked when it nests deeper than jsonschema, which walks it recursively, can follow
#: (about 100 levels of ``anyOf``): not a fault of the schema, which may well be valid.
TOO_DEEP = "it nests too deeply for the validator to follow"

#: The keyword of the one ``Violation`` that says a call's arguments were not validated: they nest deeper
#: than jsonschema follows (it recurses with them, and writes them with ``repr`` in its messages). Not a
#: violation of the schema: SD706 says it (info), SD701 to SD703 leave it.
NOT_VALIDATED = "not validated"


def schema_problem(tool: ToolDef) -> str | None:
    """Why the tool's schema cannot be used to validate anything (``TOO_DEEP`` among the reasons), or None."""
    return _checked(tool)[1]


#: What ``_compiled`` makes of a schema: its validator, or why there is none; and the schema as a
#: ``PlainObject`` when it is one.
Checked = tuple[Any, str | None, PlainObject | None]


#: What ``_checked`` said of each tool lately, by the tool's identity, the tool held so that ``is`` is exact.
#: A session's every turn checks its calls against the very same ``ToolDef`` objects (``requests.History``
#: keeps the tools of a request that sent the previous one's), so each schema is written out as a key once.
_CHECKED: dict[int, tuple[ToolDef, Checked]] = {}


def _checked(tool: ToolDef) -> Checked:
    seen = _CHECKED.get(id(tool))
    if seen is not None and seen[0] is tool:
        return seen[1]
    try:
        checked = _compiled(_key(normalized(tool)))
    except RecursionError:  # converting a Gemini schema of some hundred levels
        checked = None, TOO_DEEP, None
    if len(_CHECKED) >= 256:  # as many as ``_compiled`` keeps
        _CHECKED.clear()
    _CHECKED[id(tool)] = (tool, checked)
    return checked


def violations(tool: ToolDef, arguments: Any, limit: int = 10) -> list[Violation]:
    """What in ``arguments`` breaks the tool's schema (at most ``limit``, in document order)."""
    validator, _, plain = _checked(tool)
    if validator is None:
        return []
    if plain is not None and plain.holds(arguments):
        return []  # valid, as jsonschema's walk would say (a few times faster: most calls of a session)
    found: list[Violation] = []
    try:
        errors = sorted(validator.iter_errors(arguments), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    except RecursionError:  # the arguments nest some hundred levels: unchecked, and said so, not passed
        return [
            Violation(
                NOT_VALIDATED,
                "$",
                "the arguments were not validated: they nest too deeply for the validator to follow",
                "",
            )
        ]
    except Exception:  # noqa: BLE001 - an unresolvable $ref is met only while validating
        return []
    for error in errors[:limit]:
        keyword = str(error.validator)
        path = error.json_path
        if keyword == "required":
            match = _REQUIRED.match(error.message)
            if match:
                name = match.group(1).strip("'\"")
                path = f"{path}.{name}" if _PLAIN_KEY.match(name) else f"{path}[{match.group(1)}]"
        pointer = "/" + "/".join(str(p) for p in error.schema_path)
        found.append(Violation(keyword, path, _said(error), pointer))
    return found


#: Longer than this, the value jsonschema quotes in its message is shown clipped
_QUOTED = 120


def _said(error: Any) -> str:
    """jsonschema's words, where the value they quote whole (its Python ``repr``: a 1 MB argument, or
    hundreds of nested brackets) is shown as JSON, clipped (``jsontext.brief``)."""
    message: str = error.message
    try:
        quoted = repr(error.instance)
    except RecursionError:  # deeper than repr goes here: jsonschema's own message could not hold it either
        return message
    if len(quoted) <= _QUOTED or quoted not in message:
        return message
    return message.replace(quoted, jsontext.brief(error.instance, _QUOTED), 1)


def _key(schema: Any) -> bytes:
    try:
        return jsontext.dumps(schema, orjson.OPT_SORT_KEYS)
    except TypeError:
        return orjson.dumps(None)


@lru_cache(maxsize=256)
def _compiled(key: bytes) -> Checked:
    """(validator, None, the schema as a ``PlainObject`` or None) or (None, why the schema is unusable,
    None); cached, as each tool is validated per call."""
    import jsonschema
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    try:
        schema = orjson.loads(key)
    except orjson.JSONDecodeError:  # deeper than orjson reads (the key was written at any depth)
        return None, TOO_DEEP, None
    if schema is None:
        return None, "the tool declares no schema", None
    if not isinstance(schema, (dict, bool)):
        return None, f"the schema is a JSON {type(schema).__name__}, not an object", None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an unknown $schema URI: validate with the default draft
        cls = validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except RecursionError:
        return None, TOO_DEEP, None
    except SchemaError as error:
        where = "/" + "/".join(str(p) for p in error.path)
        return None, f"{error.message} (at {where})", None
    # draft 3 reads ``required`` and ``type`` otherwise; drafts 4 to 2020-12 read a plain object's keywords alike
    later = cls in (
        jsonschema.Draft4Validator,
        jsonschema.Draft6Validator,
        jsonschema.Draft7Validator,
        jsonschema.Draft201909Validator,
        jsonschema.Draft202012Validator,
    )
    return cls(schema), None, plain_object(schema) if later else None


def _from_openapi(schema: Any) -> Any:
    """An OpenAPI 3.0 Schema (Gemini ``parameters``) as the JSON Schema it means."""
    if isinstance(schema, list):
        return [_from_openapi(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    converted: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            kind = value.lower()
            if kind != "type_unspecified":
                converted["type"] = kind
        elif key == "properties" and isinstance(value, dict):
            converted[key] = {name: _from_openapi(s) for name, s in value.items()}
        elif key in ("items", "anyOf", "oneOf", "allOf", "not", "additionalProperties"):
            converted[key] = _from_openapi(value)
        elif key in _INTEGER_KEYWORDS and isinstance(value, str) and value.isdigit():
            converted[key] = int(value)
        elif key == "nullable":
            continue
        else:
            converted[key] = value
    if schema.get("nullable") is True and isinstance(converted.get("type"), str):
        converted["type"] = [converted["type"], "null"]
    return converted
