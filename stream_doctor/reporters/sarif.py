"""SARIF 2.1.0 for ``check``: what code scanning (``github/codeql-action/upload-sarif``) reads.

The rules table is the rule registry (check's own SD000 and SD900 among them), each with its documentation;
there is one result per finding that fails ``check``, placed at its line (SARIF regions need one,
so a finding without a line points at line 1) with its byte offset, and its related places.
Paths are URIs relative to ``%SRCROOT%``, the repository root (``originalUriBaseIds`` gives it as a
``file:`` URI, as code scanning expects paths from the checkout's root); a capture outside the root
(``../x.sse``, which no viewer can resolve against it) is an absolute ``file:`` URI. No times.
"""

from __future__ import annotations

import os
import posixpath
import textwrap
from pathlib import PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any, Iterator
from urllib.parse import quote

from stream_doctor.reporters import RenderOptions
from stream_doctor.rules import RULES
from stream_doctor.rules.base import Rule
from stream_doctor.util import jsonpieces, jsontext
from stream_doctor.util.version import __version__
from stream_doctor.values.findings import Finding, Location, Severity

if TYPE_CHECKING:
    from stream_doctor.check.result import CaptureResult, CheckResult

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
SRCROOT = "%SRCROOT%"


def render(result: CheckResult, options: RenderOptions) -> str:
    return b"".join(pieces(result, options)).decode()


def pieces(result: CheckResult, options: RenderOptions) -> Iterator[bytes]:
    """``render``'s text as it is made: a result at a time."""
    yield from jsontext.printable_pieces(jsonpieces.pieces(document(result)))
    yield b"\n"


def document(result: CheckResult) -> dict[str, Any]:
    """The SARIF log with its one run, and the run's results, as iterators (see ``util/jsonpieces.py``)."""
    rules = tuple(RULES.values())
    index = {rule.code: number for number, rule in enumerate(rules)}
    where = _Artifacts(result)
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": iter(
            [
                {
                    "tool": {
                        "driver": {
                            "name": "stream-doctor",
                            "version": __version__,
                            "semanticVersion": __version__,
                            "rules": [_rule(rule) for rule in rules],
                        }
                    },
                    "originalUriBaseIds": {SRCROOT: {"uri": where.root_uri}},
                    "columnKind": "unicodeCodePoints",
                    "results": (_result(finding, index, where) for _capture, finding in result.failures),
                    **_invocations(result, where),
                }
            ]
        ),
    }


class _Artifacts:
    """A path of the run (relative to its working directory) as an ``artifactLocation``."""

    def __init__(self, result: CheckResult) -> None:
        self.root = result.root if result.root is not None else os.path.abspath(".")
        self.base = result.base
        self.windows = "\\" in self.root or self.root[1:3] == ":\\"
        self.root_uri = self._uri(self.root).rstrip("/") + "/"  # a base URI ends with a slash (SARIF 3.14.14)

    def _uri(self, absolute: str) -> str:
        return (PureWindowsPath(absolute) if self.windows else PurePosixPath(absolute)).as_uri()

    def location(self, path: str) -> dict[str, Any]:
        relative = posixpath.normpath(posixpath.join(self.base, path.replace("\\", "/")))
        if relative == ".." or relative.startswith("../") or posixpath.isabs(relative):
            joined = os.path.normpath(os.path.join(self.root, relative)) if not posixpath.isabs(relative) else relative
            return {"uri": self._uri(joined)}
        return {"uri": _uri(relative), "uriBaseId": SRCROOT}


def _invocations(result: CheckResult, where: _Artifacts) -> dict[str, Any]:
    """The files check met but never opened (FIFOs, devices, sockets), and the unreadable captures its
    expectations accept (SD000, which no result shows), as notes about the run itself: SARIF's place
    for a condition of the tool, not a finding about an analysed file."""
    if not result.special and not result.accepted_unreadable:
        return {}
    notes = [
        {
            "level": "warning",
            "message": {"text": f"{capture.path} is unreadable (accepted by its expectations): {_unreadable(capture)}"},
            "locations": [{"physicalLocation": {"artifactLocation": where.location(capture.path)}}],
            "descriptor": {"id": "SD000"},
        }
        for capture in result.accepted_unreadable
    ]
    notes += [
        {
            "level": "note",
            "message": {"text": f"{special.path} skipped: {special.described}, not a regular file (never opened)"},
            "locations": [{"physicalLocation": {"artifactLocation": where.location(special.path)}}],
            "properties": {"kind": special.kind},
        }
        for special in result.special
    ]
    return {"invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notes}]}


def _unreadable(capture: CaptureResult) -> str:
    """Why the capture could not be read: its SD000 finding's message."""
    return next((f.message for f in capture.findings if f.code == "SD000"), "")


def _rule(rule: Rule) -> dict[str, Any]:
    sections = rule.sections()
    what = " ".join(sections.get("What it checks", rule.summary).split())
    markdown = "\n\n".join(
        f"**{heading}**\n\n"
        + (textwrap.indent(textwrap.dedent(body), "    ") if heading == "Example" else " ".join(body.split()))
        for heading, body in sections.items()
    )
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": what},
        "help": {"text": "\n\n".join(f"{h}:\n{textwrap.dedent(b)}" for h, b in sections.items()), "markdown": markdown},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"tags": [rule.family]},
    }


def _result(finding: Finding, index: dict[str, int], where: _Artifacts) -> dict[str, Any]:
    data: dict[str, Any] = {
        "ruleId": finding.code,
        "level": LEVELS[finding.severity],
        "message": {"text": f"{finding.message}\nhint: {finding.hint}"},
        "locations": [{"physicalLocation": _physical(finding.location, where)}],
    }
    if finding.code in index:
        data["ruleIndex"] = index[finding.code]
    if finding.related:
        data["relatedLocations"] = [
            {"id": number, "physicalLocation": _physical(r.location, where), "message": {"text": r.label}}
            for number, r in enumerate(finding.related, 1)
        ]
    properties: dict[str, Any] = {}
    if finding.location.interaction is not None:
        properties["interaction"] = finding.location.interaction
    if finding.location.event is not None:
        properties["event"] = finding.location.event
    if finding.location.request_path is not None:
        properties["requestPath"] = finding.location.request_path
    if finding.call_id is not None:
        properties["callId"] = finding.call_id
    if properties:
        data["properties"] = properties
    return data


def _physical(location: Location, where: _Artifacts) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": location.line or 1}
    if location.offset is not None:
        region["byteOffset"] = location.offset
    return {"artifactLocation": where.location(location.path), "region": region}


def _uri(path: str) -> str:
    """A relative path as a URI reference: its bytes percent-encoded, also the bytes of a file name
    that is not UTF-8 (which ``os.fsdecode`` holds as lone surrogates, and UTF-8 cannot encode)."""
    try:
        return quote(path, errors="surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that is no undecoded byte
        from stream_doctor.util.jsontext import escaped

        return quote(escaped(path))
