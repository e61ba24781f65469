"""Each profile that models a TypeScript library agrees with that library, at the version pinned in
``tests/clients/node/package-lock.json``, on every project fixture of its provider: what it hands
over, at which event, whether it runs it, and what it raises.

``tests/clients/node/harness.mjs`` runs the real npm packages under Node over the fixture's bytes (a
fake ``fetch``, no network) and prints what they handed over as JSON; ``.ci/run`` installs Node and
runs ``npm ci`` there. Without Node or the installed packages the test skips with the command to
run, except under ``CI=true``, where it fails: a broken CI must not skip it silently.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from stream_doctor.api import replay
from stream_doctor.capture import load
from stream_doctor.capture.base import Pos
from stream_doctor.clients import BY_NAME, run
from stream_doctor.clients.library import sse_chunks

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
HARNESS = Path(__file__).resolve().parent / "node"
#: the TypeScript profiles and what a handoff is compared by: "input" the value the tool gets,
#: "text" the argument text
CLIENTS = {"anthropic-typescript": "input", "openai-node": "text", "vercel-ai": "input"}
#: Where a profile is known to disagree with its library, and why (each one documented in the profile).
KNOWN_DIVERGENCES: dict[tuple[str, str], str] = {}


def _pairs() -> list[tuple[str, Path]]:
    pairs = []
    for name in CLIENTS:
        for provider in BY_NAME[name].providers:
            pairs += [
                (name, path)
                for path in sorted((FIXTURES / provider).glob("*"))
                # an SDK helper-stream log is what the SDK wrote, not a response body it reads
                if path.suffix in (".sse", ".jsonl") and not path.name.startswith("sdk_helper_")
            ]
    return pairs


def _node() -> str:
    """The node executable, with the harness's packages installed; else skip (fail under CI=true)."""
    node = shutil.which("node")
    installed = (HARNESS / "node_modules" / ".package-lock.json").is_file()
    if node is None or not installed:
        missing = "Node.js (node) is not on PATH" if node is None else "the harness's packages are not installed"
        message = f"{missing}: install Node.js 20 or later and run `npm ci` in {HARNESS.relative_to(ROOT)}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message} (.ci/run does both)")
        pytest.skip(message)
    return node


@pytest.fixture(scope="module")
def libraries() -> dict[tuple[str, Path], dict[str, Any]]:
    """Every pair's run through its real library: one Node process for them all."""
    node = _node()
    pairs = _pairs()
    done = subprocess.run(
        [node, "harness.mjs"],
        cwd=HARNESS,
        input=json.dumps([_request(client, path) for client, path in pairs]),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    results = json.loads(done.stdout)
    return dict(zip(pairs, results, strict=True))


def _request(client: str, path: Path) -> dict[str, Any]:
    """What the harness needs for one run: the capture's events as the server sent them, one per chunk."""
    capture = load(str(path), None)
    position: list[Pos | None] = [None]
    chunks = []
    for data in sse_chunks(capture, capture.frames, position):
        assert position[0] is not None
        chunks.append([position[0].number, base64.b64encode(data).decode()])
    report = replay(path, keep_events=True)
    return {
        "client": client,
        "provider": report.stream.capture.provider,
        "chunks": chunks,
        "tools": sorted({call.name for call in report.stream.calls if call.name}),
        # the ids the capture sent: another one is the library's own (generated at random)
        "ids": sorted({i for _, e in report.events if isinstance(i := getattr(e, "call_id", None), str)}),
    }


def _outcome(seen: list[tuple[Any, ...]], error: str | None, error_at: int | None) -> dict[str, Any]:
    return {"seen": seen, "error": error, "error_at": error_at}


@pytest.mark.parametrize(("client", "path"), _pairs(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_profile_agrees_with_the_typescript_library(
    libraries: dict[tuple[str, Path], dict[str, Any]], client: str, path: Path
) -> None:
    library = libraries[(client, path)]
    expected = _outcome(
        [(s["at"], s["id"], s["name"], s["value"] if s["runs"] else "not run") for s in library["seen"]],
        library["error"],
        library["error_at"],
    )
    report = replay(path, keep_events=True)
    handoffs, error = run(BY_NAME[client], [event for _, event in report.events], report.stream.capture.provider)
    mode = CLIENTS[client]
    seen = [
        (
            h.at.number if h.at is not None else None,
            h.call_id,
            h.name,
            "not run" if h.invalid else (h.arguments if mode == "text" else h.input),
        )
        for h in handoffs
    ]
    actual = _outcome(
        seen,
        error.exception if error is not None else None,
        error.pos.number if error is not None and error.pos is not None else None,
    )
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

    node = _node()
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
