"""The documented-field check shared by the adapters (SD006's facts)."""

from __future__ import annotations

from stream_doctor.capture.base import Pos
from stream_doctor.providers.fields import ANY, FieldCheck, Shape
from stream_doctor.values.events import Problem

POS = Pos(1, 1, 0)
EVENT = Shape(
    "type index delta",
    {"delta": Shape("type", variants={"text_delta": "text"})},
)


def paths(found: list[object]) -> list[str]:
    return [p.message for p in found if isinstance(p, Problem) and p.kind == "unknown-field"]


def test_an_undocumented_field_is_reported_once_with_its_path() -> None:
    check = FieldCheck()
    event = {"type": "content_block_delta", "index": 0, "trace": "9f", "delta": {"type": "text_delta", "text": "a"}}
    assert paths(check.check(POS, event, EVENT, "content_block_delta")) == ["content_block_delta.trace"]
    assert check.check(POS, event, EVENT, "content_block_delta") == []  # the same path again: already listed


def test_nested_objects_and_variants_are_checked_by_their_type() -> None:
    check = FieldCheck()
    known = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a", "hue": 1}}
    assert paths(check.check(POS, known, EVENT, "e")) == ["e.delta.hue"]
    unknown_type = {"type": "content_block_delta", "index": 0, "delta": {"type": "new_delta", "hue": 1}}
    assert check.check(POS, unknown_type, EVENT, "f") == []  # an unknown delta type is SD002's, not a field


def test_empty_payloads_and_unchecked_shapes_are_not_reported() -> None:
    check = FieldCheck()
    assert check.check(POS, {"type": "x", "extra": None, "other": ""}, Shape("type"), "") == []
    parts = Shape("parts", {"parts": Shape(ANY, {"functionCall": Shape("name args")})})
    value = {"parts": [{"text": "a", "whatever": 1}, {"functionCall": {"name": "f", "args": {}, "seq": 2}}]}
    assert paths(check.check(POS, value, parts, "")) == ["parts[].functionCall.seq"]
    assert check.check(POS, {"a": 1}, None, "") == []


def test_paths_through_lists_inside_objects_and_variants_left_unchecked() -> None:
    check = FieldCheck()
    shape = Shape(
        "type delta",
        {"delta": Shape("type items", {"items": Shape("type", variants={"open": ANY, "shut": "size"})})},
    )
    items = [{"type": "open", "any": 1}, {"type": "shut", "size": 2, "hue": 3}, {"type": "new", "hue": 4}]
    event = {"type": "e", "delta": {"type": "d", "items": items}}
    # an "open" item's own fields are not checked, a "shut" item's are, a type the shape does not list is not
    assert paths(check.check(POS, event, shape, "e")) == ["e.delta.items[].hue"]
    assert paths(FieldCheck().check(POS, event, shape, "")) == ["delta.items[].hue"]
