"""Machine reports written as they are built: the pieces, joined, are byte for byte what serialising
the whole document at once gives, for every fixture and every format that writes in pieces."""

from __future__ import annotations

from typing import Any, Iterator

import orjson
import pytest

from stream_doctor.engine.redaction import redacted
from stream_doctor.reporters import RenderOptions, json_report, jsonl
from stream_doctor.util import jsontext
from stream_doctor.util.jsonpieces import materialised, pieces
from stream_doctor.values.report import json_document
from tests.check.conftest import accepted_result  # noqa: F401 - the fixture, for the "accepted" case
from tests.test_golden import CAPTURES, replayed

INDENTED = orjson.OPT_INDENT_2


def _whole(document: dict[str, Any], indent: bool = True) -> bytes:
    return orjson.dumps(_lists(document), option=INDENTED if indent else None)


def _lists(value: Any) -> Any:
    """The document as the one-dict serialisation sees it: every iterator a list, bytes as a fragment."""
    if isinstance(value, Iterator):
        return [_lists(item) for item in value]
    if isinstance(value, bytes):
        return orjson.Fragment(value)
    if isinstance(value, dict):
        return {key: _lists(item) for key, item in value.items()}
    return value


@pytest.mark.parametrize("name", CAPTURES)
def test_every_fixture_streams_its_json_report_byte_for_byte(name: str) -> None:
    report = redacted(replayed(name))
    whole = orjson.dumps(report.to_dict(), option=INDENTED | orjson.OPT_APPEND_NEWLINE)
    written = list(json_report.pieces(report, RenderOptions()))
    assert b"".join(written) == jsontext.printable(whole.decode()).encode()
    assert len(written) > len(report.calls) + len(report.findings)  # a piece per call and finding at least
    assert b"".join(pieces(json_document(report), indent=False)) == orjson.dumps(report.to_dict())
    lines = b"".join(jsonl.pieces(report, RenderOptions())).decode()
    expected = "".join(jsontext.printable(orjson.dumps(line).decode()) + "\n" for line in jsonl.lines(report))
    assert lines == expected
    if report.calls:  # --call: the selected call with its fragments
        selected = report.select("1")
        assert (
            b"".join(json_report.pieces(selected, RenderOptions()))
            == jsontext.printable(
                orjson.dumps(selected.to_dict(), option=INDENTED | orjson.OPT_APPEND_NEWLINE).decode()
            ).encode()
        )


DOCUMENTS = {  # made afresh for each use: an iterator is read once
    "flat": lambda: {"a": 1},
    "empty lists and escapes": lambda: {"empty": iter(()), "nothing": {}, "none": [], "text": "a\nb \u2028 \x85"},
    "streamed inside streamed, raw": lambda: {
        "outer": iter([{"inner": iter([1, {"x": [1, 2]}]), "raw": b'{"k":[1,2]}'}, {}, [], iter(())])
    },
    "deep plain values": lambda: {"deep": {"deeper": {"list": [{"a": [1, {"b": None}]}]}}, "after": iter([[1, [2]]])},
    "a streamed dict inside a plain one": lambda: {"nested": {"calls": iter([{"n": 1}, {"n": 2}]), "x": 3}, "y": True},
}


@pytest.mark.parametrize("case", DOCUMENTS)
@pytest.mark.parametrize("indent", [True, False])
def test_pieces_are_orjson_of_the_whole_document(case: str, indent: bool) -> None:
    make = DOCUMENTS[case]
    assert b"".join(pieces(make(), indent)) == _whole(make(), indent)


def test_materialised_is_the_document_as_lists() -> None:
    assert materialised({"a": iter([1, 2]), "b": [3], "c": {"d": 4}}) == {"a": [1, 2], "b": [3], "c": {"d": 4}}


def test_check_reports_stream_byte_for_byte() -> None:
    from stream_doctor.reporters import check_json, check_jsonl, sarif
    from tests.check.conftest import tree_result

    result = tree_result()
    options = RenderOptions()
    whole = orjson.dumps(check_json.to_dict(result, raw_reports=True), option=INDENTED).decode()
    assert b"".join(check_json.pieces(result, options)).decode() == jsontext.printable(whole) + "\n"
    assert orjson.loads(b"".join(check_json.pieces(result, options))) == check_json.to_dict(result)
    sarif_whole = orjson.dumps(_lists(sarif.document(result)), option=INDENTED).decode()
    assert b"".join(sarif.pieces(result, options)).decode() == jsontext.printable(sarif_whole) + "\n"
    lines = "".join(jsontext.printable(orjson.dumps(line).decode()) + "\n" for line in check_jsonl.lines(result))
    assert b"".join(check_jsonl.pieces(result, options)).decode() == lines


@pytest.mark.parametrize("which", ["tree", "clean", "special", "nothing", "accepted"])
def test_junit_streams_what_indenting_the_whole_tree_gives(which: str, request: pytest.FixtureRequest) -> None:
    import xml.etree.ElementTree as ET
    from dataclasses import replace

    from stream_doctor.check.result import CheckResult, SpecialFile
    from stream_doctor.reporters import junit
    from stream_doctor.values.findings import Severity
    from tests.check.conftest import clean_result, tree_result

    result = {
        "tree": tree_result,
        "clean": clean_result,
        "special": lambda: replace(tree_result(), special=(SpecialFile("in/a fifo", "fifo"),)),
        "accepted": lambda: request.getfixturevalue("accepted_result"),
        "nothing": lambda: (
            CheckResult((), (), Severity.ERROR, None, (), (SpecialFile("pipe", "fifo"),))
            if False
            else CheckResult((), (), Severity.ERROR, None)
        ),
    }[which]()
    # the whole tree at once, as junit.render made it before it wrote a case at a time
    counts = {
        "tests": str(len(result.captures) + len(result.special)),
        "failures": str(result.failed_captures),
        "errors": "0",
        "skipped": str(len(result.special)),
    }
    root = ET.Element("testsuites", {"name": "stream-doctor", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": junit.SUITE, **counts})
    properties = junit._properties(result)
    suite.extend([properties] if properties is not None else [])
    suite.extend([junit._testcase(c) for c in result.captures] + [junit._skipped(s) for s in result.special])
    ET.indent(root, space="  ")
    whole = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
    assert junit.render(result, RenderOptions()) == whole


def test_neutral_pieces_escape_what_neutral_json_escapes() -> None:
    from stream_doctor.util.jsontext import printable_pieces as neutral

    for code in [*range(0x3000), 0xFEFF, 0xFFFF, 0x1F600, 0x10FFFF]:
        if 0xD800 <= code < 0xE000:
            continue
        text = f'"a{chr(code)}é"'
        assert b"".join(neutral([text.encode()])) == jsontext.printable(text).encode(), hex(code)
