"""JUnit XML for ``check``: one test case per capture, one ``<failure>`` per finding that fails it.

The shape is the common one CI servers read (Jenkins, GitLab, Azure, GitHub test-report actions):
``testsuites > testsuite > testcase > failure``, with ``file`` on each test case. Expected
findings and findings below ``--fail-on`` go to the test case's ``<system-out>``. No times, so
the same captures give the same bytes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from itertools import chain
from typing import TYPE_CHECKING, Iterator

from stream_doctor.reporters import RenderOptions, _neutral
from stream_doctor.values.findings import Finding

if TYPE_CHECKING:
    from stream_doctor.check.result import CaptureResult, CheckResult, SpecialFile

SUITE = "stream-doctor check"
# Characters XML 1.0 cannot carry at all, even escaped, that neutralising leaves: non-characters, surrogates.
_NOT_XML = re.compile("[\ufffe\uffff\ud800-\udfff]")


def render(result: CheckResult, options: RenderOptions) -> str:
    return b"".join(pieces(result, options)).decode()


def pieces(result: CheckResult, options: RenderOptions) -> Iterator[bytes]:
    """``render``'s text as it is made: a test case at a time, laid out as ``ET.indent`` lays out
    the whole tree (``tests/test_pieces.py`` checks it against that)."""
    tests = str(len(result.captures) + len(result.special))
    failing = str(result.failed_captures)
    counts = {"tests": tests, "failures": failing, "errors": "0", "skipped": str(len(result.special))}
    root = ET.Element("testsuites", {"name": "stream-doctor", **counts})
    suite = ET.Element("testsuite", {"name": SUITE, **counts})
    yield b'<?xml version="1.0" encoding="UTF-8"?>\n'
    properties = _properties(result)
    if properties is not None:
        suite.append(properties)
    cases = chain((_testcase(c) for c in result.captures), (_skipped(s) for s in result.special))
    held = next(cases, None)
    if held is None:
        root.append(suite)
        ET.indent(root, space="  ")
        yield ET.tostring(root, encoding="utf-8", xml_declaration=False) + b"\n"
        return
    yield _opening(root) + b"\n  " + _opening(_bare(suite)) + b"\n    "
    if properties is not None:
        yield _case(properties, b"\n    ")
    for case in cases:
        yield _case(held, b"\n    ")
        held = case
    yield _case(held, b"\n  ") + b"</testsuite>\n</testsuites>\n"


def _properties(result: CheckResult) -> ET.Element | None:
    """The suite's summary of what passed only because its expectations accept it: an unreadable capture
    (SD000) is never hidden, whichever report is read."""
    words = result.unreadable_accepted_words
    if words is None:
        return None
    properties = ET.Element("properties")
    ET.SubElement(properties, "property", {"name": "summary", "value": words})
    for capture in result.accepted_unreadable:
        ET.SubElement(properties, "property", {"name": "unreadable-accepted", "value": _clean(capture.path)})
    return properties


def _bare(element: ET.Element) -> ET.Element:
    """The element without its children (its start tag is written before them)."""
    return ET.Element(element.tag, element.attrib)


def _opening(element: ET.Element) -> bytes:
    """An element's start tag, attributes escaped as ElementTree escapes them."""
    empty: bytes = ET.tostring(element, encoding="utf-8", xml_declaration=False)
    return empty[: -len(b" />")] + b">"


def _case(case: ET.Element, tail: bytes) -> bytes:
    ET.indent(case, space="  ", level=2)
    serialised: bytes = ET.tostring(case, encoding="utf-8", xml_declaration=False)
    return serialised + tail


def _testcase(capture: CaptureResult) -> ET.Element:
    folder, _, _ = capture.path.rpartition("/")
    case = ET.Element(
        "testcase", {"classname": _clean(folder or "."), "name": _clean(capture.shown), "file": _clean(capture.path)}
    )
    for finding in capture.failures:
        failure = ET.SubElement(
            case,
            "failure",
            {"type": finding.code, "message": _clean(f"{finding.code} {finding.name}: {finding.message}")},
        )
        failure.text = _details(finding)
    notes = [f"expected: {_line(f)}" for f in capture.expected]
    notes += [f"below --fail-on: {_line(f)}" for f in capture.below_threshold]
    if notes:
        ET.SubElement(case, "system-out").text = "\n".join(map(_clean, notes))
    return case


def _skipped(special: SpecialFile) -> ET.Element:
    """A file met but never opened: a skipped test case."""
    folder, _, _ = special.path.rpartition("/")
    case = ET.Element(
        "testcase", {"classname": _clean(folder or "."), "name": _clean(special.path), "file": _clean(special.path)}
    )
    ET.SubElement(case, "skipped", {"message": f"{special.described}, not a regular file (never opened)"})
    return case


def _details(finding: Finding) -> str:
    lines = [f"{finding.severity.label} {finding.code} {finding.name} at {finding.location}", finding.message]
    lines.append(f"hint: {finding.hint}")
    lines += [f"{r.label}: {r.location}" for r in finding.related]
    return "\n".join(map(_clean, lines))


def _line(finding: Finding) -> str:
    return f"{finding.severity.label} {finding.code} {finding.name} at {finding.location}: {finding.message}"


def _clean(text: str) -> str:
    """One line of text: control characters shown as escapes, and what XML cannot carry at all too."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", _neutral.text(text))
