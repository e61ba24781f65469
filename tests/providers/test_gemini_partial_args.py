"""Vertex AI partialArgs placement, tested directly: each row is a sequence of pieces, the JSON
text they write and the facts recorded for what could not be placed."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from stream_doctor.capture.problem_facts import PartialArgUnplaceable
from stream_doctor.providers.gemini_partial_args import StreamedArguments, parse_path, show_path
from stream_doctor.rules.correlation.sd523_partial_args_unplaceable import WORDS, unplaceable


def n(path: str, value: Any) -> dict[str, Any]:
    return {"jsonPath": path, "numberValue": value}


def s(path: str, value: Any, more: bool = False) -> dict[str, Any]:
    return {"jsonPath": path, "stringValue": value, **({"willContinue": True} if more else {})}


# (pieces, the whole text once finished, the facts recorded)
CASES: list[tuple[str, list[Any], str, list[PartialArgUnplaceable]]] = [
    ("scalars", [n("$.a", 1), {"jsonPath": "$.b", "boolValue": False}, {"jsonPath": "$.c", "nullValue": "NULL_VALUE"}],
     '{"a":1,"b":false,"c":null}', []),
    ("nested", [s("$.r.name", "x"), n("$.r.items[0].q", 2), n("$.r.items[1].q", 3), n("$.z", 4)],
     '{"r":{"name":"x","items":[{"q":2},{"q":3}]},"z":4}', []),
    ("string in pieces", [s("$.a", "Bos", True), s("$.a", "ton", True), s("$.a", "")], '{"a":"Boston"}', []),
    ("escapes", [s("$['a b']", 'say "hi"\n')], '{"a b":"say \\"hi\\"\\n"}', []),
    ("not an object", [["x"], n("$.a", 1)], '{"a":1}', [PartialArgUnplaceable("not-an-object", piece=["x"])]),
    ("no jsonPath", [{"numberValue": 1}], "", [PartialArgUnplaceable("no-json-path", piece={"numberValue": 1})]),
    ("invalid path", [n("a", 1)], "", [PartialArgUnplaceable("invalid-path", path="a")]),
    ("no value", [{"jsonPath": "$.a"}], "", [PartialArgUnplaceable("value-count", path="$.a")]),
    ("two values", [{"jsonPath": "$.a", "numberValue": 1, "boolValue": True}], "",
     [PartialArgUnplaceable("value-count", path="$.a", values=("numberValue", "boolValue"))]),
    ("string not continued", [s("$.a", "x", True), n("$.b", 1)], '{"a":"x","b":1}',
     [PartialArgUnplaceable("string-not-continued", path="$.a")]),
    ("string not finished", [s("$.a", "x", True)], '{"a":"x"}', [PartialArgUnplaceable("string-not-finished", path="$.a")]),
    ("root is an array", [n("$[0]", 1)], "", [PartialArgUnplaceable("root-is-array", path="$[0]")]),
    ("member of an array", [n("$.a[0]", 1), n("$.a.b", 2)], '{"a":[1]}', [PartialArgUnplaceable("member-of-array", path="$.a.b")]),
    ("index of an object", [n("$.a.b", 1), n("$.a[0]", 2)], '{"a":{"b":1}}', [PartialArgUnplaceable("index-of-object", path="$.a[0]")]),
    ("element closed", [n("$.a[0]", 1), n("$.a[1]", 2), n("$.a[0]", 3)], '{"a":[1,2]}',
     [PartialArgUnplaceable("element-closed", path="$.a[0]", element=0)]),
    ("member closed", [n("$.a", 1), n("$.b", 2), n("$.a", 3)], '{"a":1,"b":2}', [PartialArgUnplaceable("member-closed", path="$.a")]),
    ("one element skipped", [n("$.a[1]", 1)], '{"a":[null,1]}',
     [PartialArgUnplaceable("elements-skipped", path="$.a[1]", element=0, last=0)]),
    ("elements skipped", [n("$.a[0]", 0), n("$.a[3]", 3)], '{"a":[0,null,null,3]}',
     [PartialArgUnplaceable("elements-skipped", path="$.a[3]", element=1, last=2)]),
    ("64 elements skipped, each null", [n("$.a[0]", 0), n("$.a[65]", 65)], '{"a":[0,' + "null," * 64 + '65]}',
     [PartialArgUnplaceable("elements-skipped", path="$.a[65]", element=1, last=64)]),
    ("65 elements skipped: not placed", [n("$.a[0]", 0), n("$.a[66]", 66)], '{"a":[0]}',
     [PartialArgUnplaceable("elements-skipped-too-many", path="$.a[66]", element=1, last=65)]),
    ("an index of 10^8: not placed, nothing in proportion", [n("$.a[100000000]", 1)], '{"a":[]}',
     [PartialArgUnplaceable("elements-skipped-too-many", path="$.a[100000000]", element=0, last=99_999_999)]),
    ("string of the wrong type", [s("$.a", 5)], '{"a":null}', [PartialArgUnplaceable("value-type", path="$.a", value_kind="stringValue")]),
    ("number of the wrong type", [n("$.a", "5")], '{"a":null}', [PartialArgUnplaceable("value-type", path="$.a", value_kind="numberValue")]),
    ("boolean of the wrong type", [{"jsonPath": "$.a", "boolValue": 1}], '{"a":null}',
     [PartialArgUnplaceable("value-type", path="$.a", value_kind="boolValue")]),
]  # fmt: skip


@pytest.mark.parametrize(("pieces", "text", "facts"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_placement(pieces: list[Any], text: str, facts: list[PartialArgUnplaceable]) -> None:
    arguments = StreamedArguments()
    written = "".join(arguments.place(piece) for piece in pieces) + arguments.finish()
    assert written == text
    if text:
        orjson.loads(written)  # whatever was placed is valid JSON
    assert arguments.problems == facts


def test_a_split_string_is_recorded_with_its_pieces() -> None:
    arguments = StreamedArguments()
    for piece in [s("$.a", "Bos", True), s("$.a", "ton"), s("$.b", "whole")]:
        arguments.place(piece)
    ((path, pieces),) = [(x.path, x.pieces) for x in arguments.split_strings()]
    assert (path, pieces) == ("$.a", ("Bos", "ton"))


def test_paths() -> None:
    assert parse_path("$.recipe.steps[0]") == ("recipe", "steps", 0)
    assert parse_path("$['a b'][\"c\"]") == ("a b", "c")
    assert parse_path("recipe") is None and parse_path("$.a[x]") is None
    assert show_path(("recipe", "steps", 0)) == "$.recipe.steps[0]"


def test_sd523_words_every_kind() -> None:
    """Every kind the placement records has its words in SD523 (the provider writes none)."""
    kinds = {f.why for _, _, _, facts in CASES for f in facts}
    assert kinds | {"continues-no-call", "args-and-partial-args", "partial-args-not-a-list"} == set(WORDS)
    assert unplaceable(PartialArgUnplaceable("elements-skipped", "w (call 1)", "$.a[3]", element=1, last=2)) == (
        "w (call 1): the piece for $.a[3] skips array elements 1-2; null was put there"
    )
    assert unplaceable(PartialArgUnplaceable("value-type", path="$.a", value_kind="boolValue")) == (
        "boolValue at $.a is not a boolean"
    )
    assert unplaceable(PartialArgUnplaceable("value-count", path="$.a")) == "the piece for $.a carries no value"
