"""Conformance: streams recorded against live APIs by other projects, replayed as they are.

The captures live in ``../shared/corpus`` (beside the repository), never in ``fixtures/``. For each
one the calls it holds (count, ids, names, and whether the arguments parse) and exactly the rule
codes it deserves are asserted: a finding a capture does not deserve is a false positive.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from stream_doctor.engine import replay
from stream_doctor.options import Options
from tests.conftest import ROOT

CORPUS = ROOT.parent / "shared" / "corpus"

pytestmark = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the shared capture corpus is not at {CORPUS}; conformance tests skipped"
)


@dataclass(frozen=True)
class Expect:
    calls: list[tuple[str | None, str | None]]  # (id, name) in stream order
    codes: set[str] = field(default_factory=set)
    unparseable: set[str] = field(default_factory=set)  # ids whose arguments must not parse
    container: str | None = None
    provider: str = "anthropic"


ROLL_DIE = [
    "toolu_019jKkXz4jAdwHweHBw92CVY", "toolu_015dGLMbwBKv1ZRQr6KdJzeH", "toolu_01YYqBNq5mk1wMtv3PAqY44m",
    "toolu_018WxjDkQG8h7i63poySGT2x", "toolu_014ch4D3vbx928ddwxMvMvF1", "toolu_01QtZ46GWS93Z5ZaSifgGNnq",
    "toolu_012Zvp8FdgvjVGkmbHSU4EZk", "toolu_01CMz8Jhv6EfnzHQzEMdpHut", "toolu_01PfH6ADzq8Yct5jeRY9QkS2",
    "toolu_013DE3qaKvBMheZXUhwkvpdF", "toolu_01MTRMy9BEvFHWR7hpCWc4nJ", "toolu_01CXqv27ozPihE5nj6eA3Joc",
    "toolu_01K6ST6orjmPHHwM8rwLj1n9", "toolu_01QcWWQcQ1pd7nx9xohX4zAr",
]  # fmt: skip

ANTHROPIC_FIXTURES = "vercel-ai/packages/anthropic/src/__fixtures__"

EXPECTED: dict[str, Expect] = {
    # A synthetic SDK fixture: a server web_search call completes, then the turn ends in a refusal.
    "anthropic-sdk-python/tests/fixtures/fable-fallback/stream-a-toolrefusal.sse": Expect(
        [("srvtoolu_fixture_a_0001", "web_search")], container="sse"
    ),
    # Cut by max_tokens mid-string, no content_block_stop; the file also lacks its final newline.
    "anthropic-sdk-python/tests/lib/streaming/fixtures/incomplete_partial_json_response.txt": Expect(
        [("toolu_01EKqbqmZrGRXy18eN7m9kvY", "make_file")],
        {"SD301", "SD003"},
        unparseable={"toolu_01EKqbqmZrGRXy18eN7m9kvY"},
        container="sse",
    ),
    "anthropic-sdk-python/tests/lib/streaming/fixtures/tool_use_response.txt": Expect(
        [("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather")], {"SD003"}, container="sse"
    ),
    f"{ANTHROPIC_FIXTURES}/anthropic-code-execution-20250825.2.chunks.txt": Expect(
        [
            ("srvtoolu_01VjmbsCAfwDbQqZ1vMT2TXb", "text_editor_code_execution"),
            ("srvtoolu_012YoPmsXAV9uamn7ihJQ4Tq", "bash_code_execution"),
            ("srvtoolu_016pjVUw18ZvdBcGYojw9V4a", "bash_code_execution"),
        ],
        container="jsonl",
    ),
    f"{ANTHROPIC_FIXTURES}/anthropic-json-tool.2.chunks.txt": Expect([("toolu_01KFbKqPYSuAKujiL6mTfzYA", "json")]),
    f"{ANTHROPIC_FIXTURES}/anthropic-mcp.1.chunks.txt": Expect([("mcptoolu_017CuqaJcXe5ZHJjaz3KS1AT", "echo")]),
    # 15 messages; 14 later turns arrive whole inside message_start with their input in the block.
    f"{ANTHROPIC_FIXTURES}/anthropic-programmatic-tool-calling.1.chunks.txt": Expect(
        [("srvtoolu_01MzSrFWsmzBdcoQkGWLyRjK", "code_execution")] + [(i, "rollDie") for i in ROLL_DIE]
    ),
    f"{ANTHROPIC_FIXTURES}/anthropic-tool-no-args.chunks.txt": Expect(
        [("toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "updateIssueList")]
    ),
    f"{ANTHROPIC_FIXTURES}/anthropic-tool-search-deferred-bm25.chunks.txt": Expect(
        [
            ("toolu_01U8pzAHj2vNdPCA2Kf8JjeN", "readNoteTree"),
            ("srvtoolu_01FjZe9o4YXXJjGxLmfj44Rf", "tool_search_tool_bm25"),
            ("toolu_01QoRrvXNv6w4vZSyo9cnxP2", "executeEditorOperation"),
        ]
    ),
    f"{ANTHROPIC_FIXTURES}/anthropic-web-fetch-tool-20260209.1.chunks.txt": Expect(
        [("srvtoolu_01LKcA5qc1HwvLQSe3cLKmcK", "code_execution"), ("srvtoolu_01SyXFZ4vqqE144ySoN6b5UG", "web_fetch")]
    ),
    # Hand-built by the AI SDK maintainers: a second message_start spliced into a tool block.
    f"{ANTHROPIC_FIXTURES}/spliced-message-start.chunks.txt": Expect(
        [("toolu_first", "test-tool"), ("toolu_second", "test-tool")],
        {"SD301", "SD409"},
        unparseable={"toolu_first"},
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_capture(name: str) -> None:
    expect = EXPECTED[name]
    report = replay(str(CORPUS / name), Options())
    stream = report.stream
    assert stream.capture.provider == expect.provider
    if expect.container:
        assert stream.capture.container == expect.container
    assert [(c.call_id, c.name) for c in stream.calls] == expect.calls
    assert {c.call_id for c in stream.calls if c.parse_failure is not None} == expect.unparseable
    assert not stream.unknown_events, "an event the provider really sends is reported as unknown"
    assert {f.code for f in report.findings} == expect.codes, [f.message for f in report.findings]


def test_every_anthropic_stream_of_the_corpus_is_covered() -> None:
    readme = (CORPUS / "README.md").read_text()
    rows = [line for line in readme.splitlines() if line.startswith("| `") and "anthropic messages" in line]
    paths = {row.split("`")[1] for row in rows}
    streams = {p for p in paths if not p.endswith(".yaml")}  # cassettes are conversations: issue 4
    assert streams <= set(EXPECTED), sorted(streams - set(EXPECTED))
