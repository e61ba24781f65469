"""The request bodies a capture holds, rewritten in place through its container (an envelope, a HAR file, a
cassette, each recorder dialect): for tests that give a reader's fields wrong types and replay the capture.

A body is found where its container keeps it: a JSON object, a JSON text in a string (HAR ``postData.text``,
a cassette's body string), or base64 of one (``{"b64": …}``, ReqLLM). It is recognised by its keys, the ones
some request reader reads; a body kept in another coding (gzip, a go-vcr binary) is left as it is.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Callable

import orjson
import yaml

from tests.conftest import ROOT, fixture_files

#: The top-level fields some request reader reads (conversation/requests/*).
BODY_KEYS = frozenset({"messages", "contents", "input", "tools", "toolConfig", "functions", "tool_choice"})

#: The fields every reader reads, as paths into a body: each may be given any JSON value.
FIELDS: tuple[tuple[Any, ...], ...] = (
    ("messages",),
    ("tools",),
    ("contents",),
    ("input",),
    ("functions",),
    ("toolConfig",),
    ("toolConfig", "tools"),
    ("toolConfig", "toolChoice"),
    ("tool_choice",),
    ("tool_config",),
    ("previous_response_id",),
    ("anthropic_version",),
    ("messages", 0),
    ("messages", 0, "role"),
    ("messages", 0, "content"),
    ("messages", 0, "content", 0),
    ("messages", 0, "content", 0, "type"),
    ("messages", 0, "content", 0, "input"),
    ("messages", 0, "content", 0, "toolUse"),
    ("messages", 0, "tool_calls"),
    ("messages", 0, "tool_calls", 0),
    ("messages", 0, "tool_calls", 0, "function"),
    ("messages", 0, "function_call"),
    ("messages", 1, "content"),
    ("messages", 1, "tool_calls"),
    ("messages", -1, "content"),
    ("messages", -1, "tool_call_id"),
    ("contents", 0, "parts"),
    ("contents", 0, "parts", 0),
    ("contents", 0, "parts", 0, "functionCall"),
    ("contents", -1, "parts"),
    ("input", 0),
    ("input", 0, "type"),
    ("input", 0, "content"),
    ("input", -1, "arguments"),
    ("tools", 0),
    ("tools", 0, "name"),
    ("tools", 0, "type"),
    ("tools", 0, "function"),
    ("tools", 0, "input_schema"),
    ("tools", 0, "parameters"),
    ("tools", 0, "functionDeclarations"),
    ("tools", 0, "toolSpec"),
)


def is_body(value: Any) -> bool:
    """A request body: an object with a field some reader reads, and none of an event's or a record's.

    ``input`` alone is also a streamed tool call's (Bedrock's ``toolUse.input`` delta): a Responses request,
    the one body whose history is ``input``, always names its ``model``."""
    if not isinstance(value, dict) or {"type", "sd"} & value.keys():
        return False
    keys = BODY_KEYS & value.keys()
    return bool(keys) and (keys != {"input"} or "model" in value)


def set_field(body: dict[str, Any], path: tuple[Any, ...], new: Any) -> None:
    """``body`` with the field at ``path`` set to ``new`` (in place): nothing when a step is not there."""
    holder: Any = body
    for step in path[:-1]:
        if isinstance(holder, dict) and step in holder:
            holder = holder[step]
        elif isinstance(holder, list) and isinstance(step, int) and -len(holder) <= step < len(holder):
            holder = holder[step]
        else:
            return
    last = path[-1]
    if isinstance(holder, dict) and (len(path) == 1 or last in holder):
        holder[last] = new
    elif isinstance(holder, list) and isinstance(last, int) and -len(holder) <= last < len(holder):
        holder[last] = new


def _rewrite(value: Any, change: Callable[[dict[str, Any]], None]) -> tuple[Any, bool]:
    """``value`` with every request body in it changed; whether one was found."""
    if is_body(value):
        change(value)
        return value, True
    if isinstance(value, dict):
        if set(value) == {"b64"} and isinstance(value["b64"], str):
            try:
                inner = orjson.loads(base64.b64decode(value["b64"], validate=True))
            except (binascii.Error, ValueError):
                return value, False
            inner, found = _rewrite(inner, change)
            return ({"b64": base64.b64encode(_dumps(inner)).decode()} if found else value), found
        found = False
        for key, item in value.items():
            value[key], seen = _rewrite(item, change)
            found = found or seen
        return value, found
    if isinstance(value, list):
        found = False
        for index, item in enumerate(value):
            value[index], seen = _rewrite(item, change)
            found = found or seen
        return value, found
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            inner = orjson.loads(value)
        except ValueError:
            return value, False
        inner, found = _rewrite(inner, change)
        return (_dumps(inner).decode() if found else value), found
    return value, False


def _dumps(value: Any) -> bytes:
    from stream_doctor.util import jsontext  # writes any depth, where orjson stops at 254 levels

    return jsontext.dumps(value)


def rewritten(name: str, data: bytes, change: Callable[[dict[str, Any]], None]) -> bytes | None:
    """The capture ``data`` (a file named ``name``) with ``change`` applied to each request body it holds;
    None when it holds none this can reach."""
    if name.endswith((".yaml", ".yml")):
        try:
            document = yaml.safe_load(data)
        except yaml.YAMLError:
            return None
        document, found = _rewrite(document, change)
        if not found:
            return None
        try:
            return yaml.safe_dump(document, allow_unicode=True, width=1 << 20).encode()
        except RecursionError:
            # a body nested past PyYAML's recursive representer cannot be written as a YAML mapping here (the
            # reader's own depth limit is tested on hand-built YAML: tests/test_adversarial.py, 50,000 deep)
            return None
    if name.endswith(".jsonl"):
        lines, found = [], False
        for line in data.splitlines():
            try:
                record = orjson.loads(line)
            except ValueError:
                lines.append(line)
                continue
            record, seen = _rewrite(record, change)
            lines.append(_dumps(record) if seen else line)
            found = found or seen
        return b"\n".join(lines) + b"\n" if found else None
    try:
        document = orjson.loads(data)
    except ValueError:
        return None
    document, found = _rewrite(document, change)
    return _dumps(document) if found else None


def captures_with_requests() -> tuple[tuple[str, bytes], ...]:
    """The project's captures that hold a request body this module can reach: every container that records one."""
    found = []
    for path in fixture_files(suffixes=(".jsonl", ".json", ".har", ".yaml"), check_tree=True, max_size=64 << 10):
        name = path.relative_to(ROOT).as_posix()
        if rewritten(name, path.read_bytes(), lambda body: None) is not None:
            found.append((name, path.read_bytes()))
    return tuple(found)
