"""Conformance: streams recorded against live APIs by other projects, replayed as they are.

The captures live in ``../shared/corpus`` (beside the repository), never in ``fixtures/``. For each
one the calls it holds (count, ids, names, and whether the arguments parse) and exactly the rule
codes it deserves are asserted: a finding a capture does not deserve is a false positive.

Every file of the corpus is also compared with its checked-in expectation, ``tests/conformance/expected.yml``:
the calls rebuilt (turn, id, name, a hash of the argument text) and every finding at warning or above,
each with a one-line justification citing the bytes. No file may be unreadable or get SD002.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from stream_doctor.engine.pipeline import replay
from stream_doctor.values.options import Options
from tests.conformance.expectations import corpus_names
from tests.conftest import CORPUS, NO_CORPUS

#: the corpus's real recordings replayed
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CORPUS.is_dir(), reason=f"{NO_CORPUS}; conformance tests skipped"),
]


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
RESPONSES_FIXTURES = "vercel-ai/packages/openai/src/responses/__fixtures__"
OPENAI_SNAPSHOTS = "openai-python/.inline-snapshot/external"

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
    # OpenAI Chat Completions: gpt-4o streams recorded for openai-python's tests (raw SSE, with [DONE]).
    f"{OPENAI_SNAPSHOTS}/2018feb66ae13fcf5333d61b95849decc68d3f63bd38172889367e1afb1e04f7.bin": Expect(
        [("call_4XzlGBLtUe9dy3GVNV4jhq7h", "get_weather")], container="sse", provider="openai"
    ),
    f"{OPENAI_SNAPSHOTS}/a247c49c5fcd492bfb7a02a3306ad615ed8d8f649888ebfddfbc3ee151f44d46.bin": Expect(
        [("call_CTf1nWJLqSeRgDqaCG27xZ74", "get_weather")], container="sse", provider="openai"
    ),
    f"{OPENAI_SNAPSHOTS}/c6aa7e397b7123c3501f25df3a05d4daf7e8ad6d61ffa406ab5361fe36a8d5b1.bin": Expect(
        [("call_c91SqDXlYFuETYv8mUHzz6pp", "GetWeatherArgs")], container="sse", provider="openai"
    ),
    f"{OPENAI_SNAPSHOTS}/f82268f2fefd5cfbc7eeb59c297688be2f6ca0849a6e4f17851b517310841d9b.bin": Expect(
        [("call_JMW1whyEaYG438VE1OIflxA2", "GetWeatherArgs"), ("call_DNYTawLBoN8fj3KN6qU9N1Ou", "get_stock_price")],
        container="sse",
        provider="openai",
    ),
    # Compatible servers, as AI SDK chunk logs (no [DONE]: a chunk log does not record it).
    # Alibaba repeats "id": "" and "type" on continuations and sends one more empty fragment.
    "vercel-ai/packages/alibaba/src/__fixtures__/alibaba-tool-call.chunks.txt": Expect(
        [("call_eee11723464a4b9eb8cee71d", "weather")], container="jsonl", provider="openai"
    ),
    # Two completions (two chatcmpl ids) in one file, each with one whole call at index 0.
    "vercel-ai/packages/cerebras/src/fixtures/cererebras-structured-output-tools.1.chunks.txt": Expect(
        [("bbd2b9d98", "nonUsefulTool"), ("e0ecf32e0", "nonUsefulTool")], provider="openai"
    ),
    "vercel-ai/packages/deepseek/src/chat/__fixtures__/deepseek-tool-call.chunks.txt": Expect(
        [("call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather")], provider="openai"
    ),
    "vercel-ai/packages/groq/src/__fixtures__/groq-tool-call.chunks.txt": Expect(
        [("tk85n1k4m", "weather")], provider="openai"
    ),
    "vercel-ai/packages/openai-compatible/src/chat/__fixtures__/xai-tool-call.chunks.txt": Expect(
        [("call_79382389", "weather")], provider="openai"
    ),
    "vercel-ai/packages/xai/src/__fixtures__/xai-tool-call.chunks.txt": Expect(
        [("call_55117580", "weather")], provider="openai"
    ),
    # Mistral: a whole call with no index or type; and a model on Mistral's API that blanks the name.
    "vercel-ai/packages/mistral/src/__fixtures__/mistral-tool-call.chunks.txt": Expect(
        [("gSIMJiOkT", "weather")], provider="mistral"
    ),
    "vercel-ai/packages/mistral/src/__fixtures__/mistral-incremental-tool-call.chunks.txt": Expect(
        [("chatcmpl-tool-9f149c74c42f265b", "webSearchTool")], {"SD505"}, provider="mistral"
    ),
    # Gemini (gemini-3-flash-preview): a whole no-argument call, then three streamed read_screen calls;
    # no ids, a thought signature on the first call only, strings closed by empty pieces.
    "vercel-ai/packages/google/src/__fixtures__/google-stream-no-args-tool-call.chunks.txt": Expect(
        [(None, "read_theme"), (None, "read_screen"), (None, "read_screen"), (None, "read_screen")],
        {"SD520", "SD522", "SD524", "SD525"},
        container="jsonl",
        provider="gemini",
    ),
    # Vertex (gemini-3.1-pro-preview) streamed arguments: two getWeather calls closed by {"functionCall":{}}.
    "vercel-ai/packages/google/src/__fixtures__/google-stream-tool-call-arguments.chunks.txt": Expect(
        [(None, "getWeather"), (None, "getWeather")],
        {"SD520", "SD522", "SD524", "SD525"},
        container="jsonl",
        provider="gemini",
    ),
    # The last partialArgs part has no willContinue and no {"functionCall":{}} follows (SD521).
    "vercel-ai/packages/google/src/__fixtures__/"
    "google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt": Expect(
        [(None, "writeItems")], {"SD521", "SD522", "SD525"}, container="jsonl", provider="gemini"
    ),
    "vercel-ai/packages/google/src/__fixtures__/google-tool-call-gemini3.chunks.txt": Expect(
        [(None, "weather")], {"SD525"}, container="jsonl", provider="gemini"
    ),
    # 64 partialArgs pieces into a nested object with arrays of objects and of strings.
    "vercel-ai/packages/google/src/__fixtures__/google-vertex-stream-tool-call-arguments-nested.1.chunks.txt": Expect(
        [(None, "cookRecipe")], {"SD522", "SD525"}, container="jsonl", provider="gemini"
    ),
    "vercel-ai/packages/google/src/interactions/__fixtures__/tool-call-step1.chunks.txt": Expect(
        [("61nzpsv4", "getWeather")], container="jsonl", provider="gemini-interactions"
    ),
    "vercel-ai/packages/google/src/interactions/__fixtures__/tool-call-step2.chunks.txt": Expect(
        [], container="jsonl", provider="gemini-interactions"
    ),
    "vercel-ai/packages/cohere/src/__fixtures__/cohere-tool-call.chunks.txt": Expect(
        [("weather_e8p4pn45zt0t", "weather"), ("cityAttractions_pyxssbwnq9fq", "cityAttractions")],
        container="jsonl",
        provider="cohere",
    ),
    "vercel-ai/packages/cohere/src/__fixtures__/cohere-empty-tool-call.chunks.txt": Expect(
        [("currentTime_y46ar19t5gvw", "currentTime")], container="jsonl", provider="cohere"
    ),
    # The AI SDK's Bedrock chunk files start without messageStart (the live stream in the pydantic-ai
    # cassette has one) and put metadata before messageStop.
    "vercel-ai/packages/amazon-bedrock/src/__fixtures__/amazon-bedrock-json-other-tool.1.chunks.txt": Expect(
        [("toolu_01PQjhxo3eirCdKNvCJrKc8f", "get-weather")], {"SD408"}, container="jsonl", provider="bedrock"
    ),
    # Probably hand-written: a text block with an invented empty start {} (SD529), then a no-argument call.
    "vercel-ai/packages/amazon-bedrock/src/__fixtures__/amazon-bedrock-tool-no-args.chunks.txt": Expect(
        [("tool-use-id", "updateIssueList")], {"SD408", "SD529"}, container="jsonl", provider="bedrock"
    ),
    # OpenAI Responses (AI SDK chunk logs): calls keyed by output_index, id = call_id, not the fc_ item id.
    "vercel-ai/packages/azure/src/__fixtures__/azure-tool-call.1.chunks.txt": Expect(
        [("call_H5DxLSFnsGhiROnUiDHmgyc8", "weather")], container="jsonl", provider="openai-responses"
    ),
    # LM Studio: no argument delta, only function_call_arguments.done (SD518, info).
    "vercel-ai/packages/open-responses/src/responses/__fixtures__/lmstudio-tool-call.1.chunks.txt": Expect(
        [("call_2025306790300011", "weather")], {"SD518"}, provider="openai-responses"
    ),
    # apply_patch_call: the diff streams as free text (never reported as unparseable JSON).
    f"{RESPONSES_FIXTURES}/openai-apply-patch-tool.1.chunks.txt": Expect(
        [("call_kA46f91ZwocQyMCKyyZqRyC5", "apply_patch")], provider="openai-responses"
    ),
    # A client tool_search_call whose call_id changes between output_item.added and .done (SD511).
    f"{RESPONSES_FIXTURES}/openai-client-tool-search.1.chunks.txt": Expect(
        [("call_NHis2zQiYcIaO6pf9nb5q1wY", "tool_search")], {"SD511"}, provider="openai-responses"
    ),
    f"{RESPONSES_FIXTURES}/openai-client-tool-search.2.chunks.txt": Expect(
        [("call_Q7pq6EfVGRnauPLWSSYBGJ1l", "get_weather")], provider="openai-responses"
    ),
    # insufficient_quota as a nested `error` event, then response.failed: no call.
    f"{RESPONSES_FIXTURES}/openai-error.1.chunks.txt": Expect([], {"SD302"}, provider="openai-responses"),
    # mcp_list_tools, then an mcp_approval_request: a server-run call the client must approve.
    f"{RESPONSES_FIXTURES}/openai-mcp-tool-approval.1.chunks.txt": Expect(
        [("mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe", "create_short_url")], provider="openai-responses"
    ),
    # Four responses in one log, each created … completed: four messages.
    f"{RESPONSES_FIXTURES}/openai-reasoning-encrypted-content.1.chunks.txt": Expect(
        [
            ("call_AB6AaRZ1FYZB2RwS6A5vbdqn", "calculator"),
            ("call_Q6pW65MUgW9vF59BmItYGos3", "calculator"),
            ("call_Zl5vIMnD7dVAjgU6FkhmiCZh", "calculator"),
        ],
        provider="openai-responses",
    ),
    # A hosted (server-side) tool_search_call, whose only id is its item id, then a function call.
    f"{RESPONSES_FIXTURES}/openai-tool-search.1.chunks.txt": Expect(
        [
            ("tsc_08a14073c7135dc10069aa686296c88190bff77ad137e79d59", "tool_search"),
            ("call_pddfxhfOx4gY56zn4vIIEbFp", "get_weather"),
        ],
        provider="openai-responses",
    ),
    # Code mode: a server-run `program` item whose code calls the client function getInventory (caller program).
    f"{RESPONSES_FIXTURES}/programmatic-tool-calling.1.chunks.txt": Expect(
        [("call_voPdoCqf8APY4DMpam3bdmxq", "program"), ("call_VgDSZztLociNcutQZWkC2fmL", "getInventory")],
        provider="openai-responses",
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


def test_every_gemini_cohere_and_bedrock_stream_of_the_corpus_is_covered() -> None:
    readme = (CORPUS / "README.md").read_text()
    providers = ("/ gemini", "/ cohere", "/ bedrock")
    rows = [line for line in readme.splitlines() if line.startswith("| `") and any(p in line for p in providers)]
    streams = {row.split("`")[1] for row in rows if not row.split("`")[1].endswith(".yaml")}
    assert streams and streams <= set(EXPECTED), sorted(streams - set(EXPECTED))


def test_every_openai_chat_and_mistral_stream_of_the_corpus_is_covered() -> None:
    readme = (CORPUS / "README.md").read_text()
    rows = [
        line
        for line in readme.splitlines()
        if line.startswith("| `") and ("openai chat" in line or "mistral chat" in line)
    ]
    streams = {row.split("`")[1] for row in rows if not row.split("`")[1].endswith(".yaml")}
    assert streams <= set(EXPECTED), sorted(streams - set(EXPECTED))


def test_every_openai_responses_stream_of_the_corpus_is_covered() -> None:
    readme = (CORPUS / "README.md").read_text()
    rows = [line for line in readme.splitlines() if line.startswith("| `") and "openai responses" in line]
    streams = {row.split("`")[1] for row in rows if not row.split("`")[1].endswith(".yaml")}
    assert streams and streams <= set(EXPECTED), sorted(streams - set(EXPECTED))


# -- Conversations: pydantic-ai's VCR cassettes, every interaction and its follow-up request ----------------------


@dataclass(frozen=True)
class ExpectConversation:
    turns: list[list[tuple[str | None, str | None]]]  # per turn, the calls its stream made: (id, name)
    results: list[list[str]]  # per turn, the ids of the tool results its request carries
    provider: str
    codes: set[str] = field(default_factory=set)
    containers: tuple[str, ...] = ("sse",)  # the response bodies' container


PYDANTIC = "pydantic-ai/tests"
WEB_SEARCH_1 = [
    "srvtoolu_01FGPZ2P6yPXWdiD1Cxjpix3", "srvtoolu_01FFhqUX7uk2uakLEqo1v9D2", "srvtoolu_01Qu6xumZrwPeBQYGdawQUMS",
    "srvtoolu_01JjHpcj7RERHyZgH3QmUv4i", "srvtoolu_01MWxzBCgoNxNjk5DiMqLv9u", "srvtoolu_01Uu9K4fi2aJbym3jd797DPa",
    "srvtoolu_01BTRCcGdMQbeAviLraoxoXq", "srvtoolu_01NV7iQ8LzvPYQpa5Kwy8HB5", "srvtoolu_01Ewz8JuxwuYL5wDNADGeEFL",
    "srvtoolu_012kdkr4fhMUVKKXVWqaunrP", "srvtoolu_01NKrV3hGbcHeBVtaTKBHRuA",
]  # fmt: skip
WEB_SEARCH_2 = [
    "srvtoolu_01H8ajWSUxCqcsKGC19c58SX", "srvtoolu_01S8ZCaHykx2SoyXpa7bLanr", "srvtoolu_01WedLhqEp9m4chQBrT8ZeW8",
    "srvtoolu_01Hj4Q34WzvFUUHiCgg8t2Zx",
]  # fmt: skip

CASSETTES: dict[str, ExpectConversation] = {
    # Three turns of gpt-4o: two no-argument calls, then get_weather, then final_result (54 fragments). SD705
    # (info): get_weather's city and final_result's answers had begun before they were whole.
    f"{PYDANTIC}/cassettes/test_temporal/test_complex_agent_run.yaml": ExpectConversation(
        [
            [("call_q2UyBRP7eXNTzAoR8lEhjc9Z", "get_country"), ("call_b51ijcpFkDiTQG1bQzsrmtW5", "get_product_name")],
            [("call_LwxJUB9KppVyogRRLQsamRJv", "get_weather")],
            [("call_CCGIWaMeYWmxOQ91orkmTvzn", "final_result")],
        ],
        [
            [],
            ["call_q2UyBRP7eXNTzAoR8lEhjc9Z", "call_b51ijcpFkDiTQG1bQzsrmtW5"],
            ["call_q2UyBRP7eXNTzAoR8lEhjc9Z", "call_b51ijcpFkDiTQG1bQzsrmtW5", "call_LwxJUB9KppVyogRRLQsamRJv"],
        ],
        "openai",
        {"SD705"},
    ),
    # A server tool_search then a client call in one message; the follow-up answers only the client call.
    f"{PYDANTIC}/cassettes/test_tool_search/test_anthropic_native_tool_search_streaming.yaml": ExpectConversation(
        [
            [
                ("srvtoolu_01S5swZdBmTzLDVzwcT5LbHp", "tool_search_tool_bm25"),
                ("toolu_01EFn5wTNBYA8Reni8rbmnHT", "get_exchange_rate"),
            ],
            [],
        ],
        [[], ["toolu_01EFn5wTNBYA8Reni8rbmnHT"]],
        "anthropic",
    ),
    f"{PYDANTIC}/models/cassettes/test_anthropic/test_anthropic_advisor_tool_stream.yaml": ExpectConversation(
        [[("srvtoolu_01DgsKYsJWQfJxubLmaKLEj6", "advisor")]], [[]], "anthropic"
    ),
    # 0.7 MB: 11 web searches and pause_turn (SD305, info), then the paused turn sent back whole (the second
    # response body is a double-quoted YAML scalar) and 4 more searches. Its replay's time is measured by
    # benchmarks/bench_corpus.py (target: 0.5 s), never here.
    f"{PYDANTIC}/models/cassettes/test_anthropic/test_pause_turn_web_search_streaming_vcr.yaml": ExpectConversation(
        [[(i, "web_search") for i in WEB_SEARCH_1], [(i, "web_search") for i in WEB_SEARCH_2]],
        [[], []],
        "anthropic",
        {"SD305"},
    ),
    # Nova micro over ConverseStream: binary event-stream bodies (!!binary); the follow-up carries the toolResult.
    f"{PYDANTIC}/models/cassettes/test_bedrock/test_bedrock_model_iter_stream.yaml": ExpectConversation(
        [[("tooluse_lAG_zP8QRHmSYOwZzzaCqA", "get_temperature")], []],
        [[], ["tooluse_lAG_zP8QRHmSYOwZzzaCqA"]],
        "bedrock",
        containers=("eventstream",),
    ),
    # The functionCalls have no id; pydantic-ai sends them back with ids of its own (pyd_ai_…), answered by id.
    f"{PYDANTIC}/models/cassettes/test_google/test_google_model_iter_stream.yaml": ExpectConversation(
        [[(None, "get_capital")], [(None, "get_temperature")], []],
        [
            [],
            ["pyd_ai_0e1a07b3c2b64d2ab3ad2efbe18e1b97"],
            ["pyd_ai_0e1a07b3c2b64d2ab3ad2efbe18e1b97", "pyd_ai_98b25d994c5648df82f683188629229d"],
        ],
        "gemini",
        {"SD525"},
    ),
    f"{PYDANTIC}/models/cassettes/test_google/test_google_streaming_tool_call_thought_signature.yaml": ExpectConversation(
        [[(None, "get_country")], []], [[], ["pyd_ai_29bf73b69e02448588e15893d47a3e7e"]], "gemini", {"SD525"}
    ),
    f"{PYDANTIC}/models/cassettes/test_openai/test_run_stream_sync_streams_real_model.yaml": ExpectConversation(
        [[("call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital")], []],
        [[], ["call_ZR5UUuTt3pf61kjwAJIYdVMj"]],
        "openai",
        {"SD705"},
    ),
}


@pytest.mark.parametrize("name", sorted(CASSETTES))
def test_corpus_cassette(name: str) -> None:
    expect = CASSETTES[name]
    report = replay(str(CORPUS / name), Options())
    assert report.conversation and report.source is not None and report.source.container == "vcr"
    assert report.stream.capture.provider == expect.provider
    assert [[(c.call_id, c.name) for c in turn.stream.calls] for turn in report.turns] == expect.turns
    assert [[r.call_id for r in turn.facts.results] for turn in report.turns] == expect.results
    assert all(turn.facts.family != "unknown" for turn in report.turns), "a follow-up request was not read"
    assert {turn.stream.capture.container for turn in report.turns} == set(expect.containers)
    assert all(turn.stream.ended_cleanly and not turn.stream.unknown_events for turn in report.turns)
    assert not any(c.parse_failure for c in report.calls)
    assert {f.code for f in report.findings} == expect.codes, [f.message for f in report.findings]
    for finding in report.findings:  # every position points into the cassette: its interaction and a line of it
        assert finding.location.interaction is not None and finding.location.line is not None


def test_every_cassette_of_the_corpus_is_covered() -> None:
    readme = (CORPUS / "README.md").read_text()
    rows = [line for line in readme.splitlines() if line.startswith("| `") and "VCR YAML cassette" in line]
    cassettes = {row.split("`")[1] for row in rows}
    assert cassettes and cassettes <= set(CASSETTES), sorted(cassettes - set(CASSETTES))


# -- Every corpus file against its checked-in expectation (tests/conformance/expected.yml) -------------------------


def _expectations() -> dict:
    from tests.conformance.expectations import load

    return load()


def test_every_corpus_file_has_an_expectation() -> None:
    assert sorted(_expectations()) == corpus_names(), "run python -m tests.conformance.expectations and justify"


def test_every_warning_or_error_is_justified_from_the_bytes() -> None:
    from tests.conformance.expectations import TODO

    for name, expected in _expectations().items():
        for finding in expected["findings"]:
            why = finding.get("why") or ""
            assert why and why != TODO and "line" in why, (name, finding)


@pytest.mark.parametrize("name", corpus_names())
def test_corpus_file_matches_its_expectation(name: str) -> None:
    from tests.conformance.expectations import observe

    expected = _expectations()[name]
    seen = observe(name)  # no file is unreadable: replay raises on one
    assert seen["provider"] == expected["provider"]
    assert seen["calls"] == expected["calls"], "calls rebuilt (turn, id, name, argument hash) changed"
    assert [{k: f[k] for k in ("code", "severity", "at", "call")} for f in expected["findings"]] == seen["findings"]
    assert seen["info"] == expected["info"]
    assert "SD002" not in seen["info"] and all(f["code"] != "SD002" for f in seen["findings"])
