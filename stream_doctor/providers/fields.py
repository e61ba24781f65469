"""Documented fields of a provider's events, and the report of any other field (SD006).

Each adapter states, as data, the fields its provider documents for an event (``Shape``: the
field names, the shapes of the nested objects worth checking, and for a discriminated object the
fields of each ``type``), including the documented extensions of compatible servers. An event of
a known type that carries another field is still read as that event; the field is reported once
per translator (``FieldCheck``) as an ``unknown-field`` problem naming its path, and the engine keeps
only the first report of a path across the turns of one capture.

The check runs on an adapter's checked path, once per event. Hot paths compare only key counts
(``len(value)`` against the number of fields the fast path itself read) and fall back to ``check``
when the count differs, so the common fragment costs one integer comparison.
"""

from __future__ import annotations

from typing import Any, Mapping

from stream_doctor.capture.base import Pos
from stream_doctor.values.events import Event, Problem

#: Payloads that carry nothing: a field holding one of these is never reported.
_EMPTY: tuple[Any, ...] = (None, "", [], {})

#: The fields of a shape whose own fields are not checked (only its nested objects are).
ANY = "*"


class Shape:
    """The documented fields of one JSON object, and of the nested objects worth checking.

    ``fields`` ``"*"`` leaves the object's own fields unchecked (another rule reads them) but not its
    nested objects. ``nested`` maps a field to the shape of its value (an object, or each object of a list);
    ``variants`` maps the object's ``type`` to the extra fields that type documents (an object whose
    type is not listed is not checked: an unknown type is SD002's business, not an unknown field).
    """

    __slots__ = ("fields", "nested", "variants", "tag", "children", "unchecked")

    def __init__(
        self,
        fields: str | frozenset[str] = "",
        nested: Mapping[str, Shape] | None = None,
        variants: Mapping[str, str | frozenset[str]] | None = None,
        tag: str = "type",
    ) -> None:
        self.fields: frozenset[str] = frozenset(fields.split()) if isinstance(fields, str) else fields
        self.nested: Mapping[str, Shape] = nested or {}
        self.variants: dict[str, frozenset[str]] = {
            kind: self.fields | (frozenset(extra.split()) if isinstance(extra, str) else extra)
            for kind, extra in (variants or {}).items()
        }
        self.tag = tag
        # read on every event of the checked path: the nested shapes as pairs, and whether the
        # object's own fields go unchecked (``ANY``), so a walk neither builds nor searches them
        self.children: tuple[tuple[str, Shape], ...] = tuple(self.nested.items())
        self.unchecked = ANY in self.fields


class FieldCheck:
    """Reports each undocumented field path once (the engine keeps the first per capture)."""

    __slots__ = ("seen",)

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def check(self, pos: Pos, value: dict[str, Any], shape: Shape | None, path: str) -> list[Event]:
        """The unknown-field problems of ``value`` (an event or a part of one) at ``path``."""
        if shape is None:
            return []
        found: list[str] = []
        _walk(value, shape, path, found)
        if not found:
            return []
        out: list[Event] = []
        for field in found:
            if field not in self.seen:
                self.seen.add(field)
                out.append(Problem(pos, "unknown-field", field))
        return out


def _walk(value: dict[str, Any], shape: Shape, path: str, found: list[str]) -> None:
    # runs for every event and nested object of the checked path: a shape's fields, or those of its
    # ``type`` when it has variants (an object of a type it does not list is not checked)
    if shape.variants:
        kind = value.get(shape.tag)
        documented = shape.variants.get(kind) if isinstance(kind, str) else None
        if documented is None:
            return
        unchecked = ANY in documented
    else:
        documented, unchecked = shape.fields, shape.unchecked
    if not unchecked and not documented.issuperset(value):
        prefix = f"{path}." if path else ""
        found.extend(prefix + key for key, payload in value.items() if key not in documented and payload not in _EMPTY)
    for key, inner in shape.children:
        child = value.get(key)
        if isinstance(child, dict):
            _walk(child, inner, f"{path}.{key}" if path else key, found)
        elif isinstance(child, list):
            where = f"{path}.{key}[]" if path else f"{key}[]"
            for item in child:
                if isinstance(item, dict):
                    _walk(item, inner, where, found)
