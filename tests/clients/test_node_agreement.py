"""Each profile that models a TypeScript library agrees with that library, at the version pinned in
``tests/clients/node/package-lock.json``, on every project fixture of its provider: what it hands
over, at which event, whether it runs it, and what it raises.

``stream_doctor/clients/library/harness.mjs`` runs the real npm packages under Node over the fixture's bytes (a
fake ``fetch``, no network) and answers what they handed over as JSON, one long-lived process per
session (``node_harness.py``); ``.ci/run`` installs Node and runs ``npm ci`` there. Without Node or
the installed packages the test skips with the command to run, except under ``CI=true``, where it
fails: a broken CI must not skip it silently.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from stream_doctor.api import replay
from stream_doctor.capture import load
from stream_doctor.capture.base import Pos
from stream_doctor.clients import PROFILES, run
from stream_doctor.clients.library import sse_chunks
from tests.clients.node_harness import CLIENTS, HARNESS, NodeHarness, library_outcome, node_executable, profile_outcome
from tests.clients.streams import written_back_framings
from tests.conftest import fixture_files

#: Node and the harness's npm packages; every fixture of every TypeScript profile's providers through its library
pytestmark = [pytest.mark.external, pytest.mark.slow]

#: Where a profile is known to disagree with its library, and why (each one documented in the profile).
KNOWN_DIVERGENCES: dict[tuple[str, str], str] = {}


def _pairs() -> list[tuple[str, Path]]:
    pairs = []
    for name in CLIENTS:
        pairs += [
            (name, path)
            for path in fixture_files(*PROFILES[name].providers, suffixes=(".sse", ".jsonl"))
            # an SDK helper-stream log is what the SDK wrote, not a response body it reads
            if not path.name.startswith("sdk_helper_")
        ]
    return pairs


def _library_run(harness: NodeHarness, client: str, path: Path) -> dict[str, Any]:
    """The pair's run through its real library, the capture's events written back as the server sent
    them, one per chunk (``test_node_differential.py`` feeds the original bytes)."""
    capture = load(str(path), None)
    position: list[Pos | None] = [None]
    chunks = []
    for data in sse_chunks(capture, capture.frames, position):
        assert position[0] is not None
        chunks.append((position[0], data))
    report = replay(path, keep_events=True)
    return harness.run(
        client,
        report.stream.capture.provider,
        chunks,
        {call.name for call in report.stream.calls if call.name},
        # the ids the capture sent: another one is the library's own (generated at random)
        {i for _, e in report.events if isinstance(i := getattr(e, "call_id", None), str)},
    )


@pytest.mark.parametrize(("client", "path"), _pairs(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_profile_agrees_with_the_typescript_library(node_harness: NodeHarness, client: str, path: Path) -> None:
    library = _library_run(node_harness, client, path)
    expected = library_outcome(library)
    report = replay(path, keep_events=True)
    events = [event for _, event in report.events]
    framings = written_back_framings(report)
    # a capture cut inside its last event is written back as it was cut (as test_node_differential feeds it)
    cut_last = not load(str(path), None).ended_cleanly
    actual = profile_outcome(*run(PROFILES[client], events, report.stream.capture.provider, framings, cut_last), client)
    known = KNOWN_DIVERGENCES.get((client, path.name))
    if known is not None:
        assert actual != expected, f"fixed? remove it from KNOWN_DIVERGENCES: {known}"
        pytest.xfail(known)
    assert actual == expected


#: buffers where the SDK's vendored partial parser and jiter's partial mode part ways, and near misses
PARTIAL_TEXTS = [
    '{"a": 1}"}',  # a dangling string after the whole value: dropped
    '{"a": 1}{"b": 2}',  # a second whole value: JSON.parse throws
    '{"a": 1} x',
    '{"a": "b',
    '{"a": tr',
    '{"a": nulx}',
    "nul",
    "[1, 2",
    "12 3",
    '{"a"',
    '{"a":',
    '{"a": 1.',
    '{"a": 1e',
    '{"a": -',
    '{"k": "x\\"',
    '{"k": "x\\\\"',
    '["a",',
    '{"a": [1, {"b": 2',
    "}",
    "[}",
    "",
    "  ",
    '{"a": NaN}',
    '{"a": "\u00e9", "b": [true, false, null]}',
    '{"path": "src/cache.ts", "edits": [{"oldText": "x\\", "newText": "y"}]}',
]


def test_the_partial_parser_port_matches_the_sdks_vendored_one() -> None:
    """``clients/_partial_vendored.py`` against the SDK's own ``partialParse``, under Node."""
    from stream_doctor.clients._partial_vendored import VendoredParseError, vendored_partial_parse

    node = node_executable()
    script = (
        'const {partialParse} = require("./node_modules/@anthropic-ai/sdk/_vendor/partial-json-parser/parser.js");'
        'const texts = JSON.parse(require("fs").readFileSync(0, "utf8"));'
        "console.log(JSON.stringify(texts.map((t) => { try { return {value: partialParse(t)}; }"
        " catch (e) { return {error: e.constructor.name}; } })));"
    )
    done = subprocess.run(
        [node, "-e", script], cwd=HARNESS, input=json.dumps(PARTIAL_TEXTS), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-4000:]
    for text, expected in zip(PARTIAL_TEXTS, json.loads(done.stdout), strict=True):
        try:
            ported: dict[str, Any] = {"value": vendored_partial_parse(text)}
        except VendoredParseError:
            ported = {"error": "SyntaxError"}
        assert ported == expected, text


#: nesting deeper than Python's ``json`` reads (V8's ``JSON.parse`` reads any depth), valid and not
DEEP_TEXTS = ["[" * 5000, "[" * 5000 + "1", '{"a":' * 3000 + "[1, 2", "[" * 5000 + "x", "[" * 3000 + "1 2", "[" * 201]


def _shape(value: Any) -> list[Any]:
    """(depth, the innermost value) of a value nested in first elements and values, read by a loop."""
    depth = 0
    while isinstance(value, (list, dict)) and value:
        depth += 1
        value = value[0] if isinstance(value, list) else next(iter(value.values()))
    return [
        depth + (1 if isinstance(value, (list, dict)) else 0),
        value if not isinstance(value, (list, dict)) else None,
    ]


def test_the_partial_parser_port_reads_any_depth_as_the_sdks_vendored_one() -> None:
    """5,000 unclosed ``[`` are 5,000 nested arrays to the SDK's ``partialParse``, and to the port (no
    RecursionError); what ``JSON.parse`` throws on, deep, still throws."""
    from stream_doctor.clients._partial_vendored import VendoredParseError, vendored_partial_parse

    script = (
        'const {partialParse} = require("./node_modules/@anthropic-ai/sdk/_vendor/partial-json-parser/parser.js");'
        'const texts = JSON.parse(require("fs").readFileSync(0, "utf8"));'
        "const shape = (v) => { let d = 0; while (v !== null && typeof v === 'object' && Object.keys(v).length)"
        " { d++; v = Array.isArray(v) ? v[0] : Object.values(v)[0]; }"
        " return (v !== null && typeof v === 'object') ? [d + 1, null] : [d, v]; };"
        "console.log(JSON.stringify(texts.map((t) => { try { return {shape: shape(partialParse(t))}; }"
        " catch (e) { return {error: e.constructor.name}; } })));"
    )
    done = subprocess.run(
        [node_executable(), "-e", script], cwd=HARNESS, input=json.dumps(DEEP_TEXTS), capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    for text, expected in zip(DEEP_TEXTS, json.loads(done.stdout), strict=True):
        try:
            ported: dict[str, Any] = {"shape": _shape(vendored_partial_parse(text))}
        except VendoredParseError:
            ported = {"error": "SyntaxError"}
        assert ported == expected, text[:20]
