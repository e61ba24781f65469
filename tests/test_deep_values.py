"""Values nested as deep as orjson reads (1,024 levels) in every place of a capture: the streamed arguments,
the same arguments echoed in the next request, the request's tools, metadata and messages. Python's ``==``,
``repr`` and jsonschema recurse as deep as the value and raise ``RecursionError`` near 1,000 levels: each
place is replayed whole, with the verdict a shallow value gets, or said not checked (info), never an
internal error that loses every finding.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

import orjson
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_doctor import replay
from stream_doctor.accumulate.arguments import parse_arguments
from stream_doctor.capture.repeats import Repeats
from stream_doctor.conversation.request_parts import ToolDef
from stream_doctor.conversation.schemas import NOT_VALIDATED, violations
from stream_doctor.util.jsontext import READ_DEPTH
from stream_doctor.values.findings import Severity
from tests.conftest import ROOT
from tests.test_adversarial import PEAK_BOUND_KB, _anthropic_call, run_cli

TWO_TURNS = ROOT / "fixtures/conversations/anthropic_two_turns.yaml"
#: deep enough that ``==`` and jsonschema's messages raise under pytest's stack, within what orjson reads
DEEP = 990
#: the near miss: as deep as a real nested argument gets, checked as any value
SHALLOW = 200


#: where a test's body holds the deep value, written as text (json.dumps and yaml recurse as deep as it)
SLOT = "@deep@"
#: an input_json_delta's text in the cassette's stream
PARTIAL = re.compile(r'"partial_json":"(?:[^"\\]|\\.)*"')


def nested(depth: int, kind: str, leaf: int = 1) -> str:
    """``leaf`` wrapped ``depth`` times in a list or in ``{"a": …}``, as JSON text."""
    return ("[" * depth + str(leaf) + "]" * depth) if kind == "array" else '{"a":' * depth + str(leaf) + "}" * depth


Change = Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], None]


def _cassette(tmp_path: Path, change: Change, values: tuple[str, str]) -> Path:
    """The two-turn Anthropic cassette, its two request bodies and its first response changed by ``change``,
    ``SLOT`` in each body then replaced by the JSON text in ``values``."""
    cassette = yaml.safe_load(TWO_TURNS.read_text())
    first, second = cassette["interactions"]
    bodies = [json.loads(first["request"]["body"]), json.loads(second["request"]["body"])]
    change(bodies[0], bodies[1], first["response"]["body"])
    first["request"]["body"], second["request"]["body"] = (
        json.dumps(b).replace(json.dumps(SLOT), v) for b, v in zip(bodies, values, strict=True)
    )
    path = tmp_path / "deep.yaml"
    path.write_text(yaml.safe_dump(cassette))
    return path


def _streamed_and_echoed(streamed: str) -> Change:
    """The call streams ``{"location": streamed}`` (one input_json_delta) and goes back with ``SLOT``."""

    def change(first: dict[str, Any], second: dict[str, Any], response: dict[str, Any]) -> None:
        texts = iter([json.dumps('{"location": ' + streamed + "}")])  # the first delta holds it all
        response["string"] = PARTIAL.sub(lambda _: '"partial_json":' + next(texts, '""'), response["string"])
        second["messages"][1]["content"][1]["input"] = {"location": SLOT}

    return change


def _codes(path: Path) -> list[tuple[str, Severity, str | None]]:
    return sorted((f.code, f.severity, f.kind) for f in replay(str(path)).findings)


@pytest.mark.parametrize("kind", ["array", "object"])
def test_a_deep_echoed_input_is_compared_and_its_call_said_not_validated(tmp_path: Path, kind: str) -> None:
    """Pairing compared the echoed input with ``==``: at 990 levels the replay ended with "internal error
    RecursionError". The same input echoed is no finding; its schema check, which cannot follow it, is an
    info SD706 (not a pass, not SD702)."""
    same = _cassette(tmp_path, _streamed_and_echoed(nested(DEEP, kind)), ("", nested(DEEP, kind)))
    assert _codes(same) == [("SD706", Severity.INFO, "too deep")]
    (finding,) = replay(str(same)).findings
    assert "were not validated" in finding.message and "get_weather" in finding.message


@pytest.mark.parametrize("kind", ["array", "object"])
def test_a_deep_echoed_input_that_differs_at_its_bottom_is_sd609(tmp_path: Path, kind: str) -> None:
    differs = _cassette(tmp_path, _streamed_and_echoed(nested(DEEP, kind)), ("", nested(DEEP, kind, 2)))
    assert ("SD609", Severity.WARNING, None) in _codes(differs)


@pytest.mark.parametrize("kind", ["array", "object"])
def test_near_miss_a_shallower_echoed_input_is_validated_as_before(tmp_path: Path, kind: str) -> None:
    """200 levels: validated (the location is not a string: SD702), compared (the same: no SD609)."""
    same = _cassette(tmp_path, _streamed_and_echoed(nested(SHALLOW, kind)), ("", nested(SHALLOW, kind)))
    assert _codes(same) == [("SD702", Severity.ERROR, None)]


#: places of both request bodies a deep value is put in (at ``SLOT``)
PLACES: dict[str, Change] = {
    "tool schema default": lambda a, b, r: [
        body["tools"][0]["input_schema"]["properties"].update(extra={"default": SLOT}) for body in (a, b)
    ],
    "metadata": lambda a, b, r: [body.update(metadata={"user_id": SLOT}) for body in (a, b)],
    "message content": lambda a, b, r: [
        body["messages"][0].update(content=[{"type": "text", "text": "x", "extra": SLOT}]) for body in (a, b)
    ],
}


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("depth", [DEEP, SHALLOW])
def test_a_deep_value_in_both_request_bodies_reads_as_a_shallow_one(tmp_path: Path, place: str, depth: int) -> None:
    """The second request repeats the first one's deep value: sharing it (``capture.repeats``) and reading
    its history (``History``) compared them with ``==`` and raised; now the capture reads as without it."""
    plain = _codes(TWO_TURNS)
    value = nested(depth, "object")
    assert _codes(_cassette(tmp_path, PLACES[place], (value, value))) == plain


@pytest.mark.parametrize("depth", [0, 20, 990, 1020])
@pytest.mark.parametrize("kind", ["array", "object"])
@pytest.mark.parametrize("same", [True, False])
def test_repeats_shares_a_value_at_any_depth_and_never_a_different_one(depth: int, kind: str, same: bool) -> None:
    """What ``share`` makes the next body point at is equal to what it held, at every depth orjson reads.
    (Not a hypothesis test: hypothesis raises the recursion limit while it runs one, hiding the fault.)"""
    value = nested(depth, kind)
    first = orjson.loads(f'{{"messages": [{value}], "metadata": {value}}}')
    second = orjson.loads(f'{{"messages": [{value}, 1], "metadata": {value if same else nested(depth, kind, 2)}}}')
    repeats = Repeats(json_text=False)
    repeats.share(first)
    repeats.share(second)
    assert second["messages"][0] is first["messages"][0]
    assert (second["metadata"] is first["metadata"]) is same


def test_validation_that_cannot_follow_the_arguments_says_so_and_a_shallow_value_is_validated() -> None:
    tool = ToolDef("f", {"type": "object", "properties": {"a": {"type": "string"}}}, "tools[0].input_schema")
    deep = violations(
        tool, orjson.loads('{"a": ' + nested(1020, "array") + "}")
    )  # past the stack: jsonschema's message repr()s it
    assert [v.keyword for v in deep] == [NOT_VALIDATED]
    assert [v.keyword for v in violations(tool, orjson.loads('{"a": ' + nested(SHALLOW, "array") + "}"))] == ["type"]
    assert violations(tool, {"a": "x"}) == []


def _mixed(depth: int, shapes: list[str]) -> str:
    """A JSON object ``depth`` levels deep, each level a list, an object or a list of a string and the rest."""
    opening, closing = "", ""
    for level in range(depth - 1):
        shape = shapes[level % len(shapes)]
        opening += {"array": "[", "object": '{"k\\"]":', "pair": '["a]{\\"", '}[shape]
        closing = {"array": "]", "object": "}", "pair": "]"}[shape] + closing
    return '{"x":' + opening + '"v"' + closing + "}"


@settings(max_examples=80, deadline=None, derandomize=True, database=None)
@given(
    st.integers(1, 1100),
    st.lists(st.sampled_from(["array", "object", "pair"]), min_size=1, max_size=3),
    st.floats(0, 1, exclude_max=True),
)
def test_arguments_cut_at_any_depth_are_truncated_never_invalid(depth: int, shapes: list[str], cut: float) -> None:
    """orjson gives up on a run of some hundred unclosed containers with "failed to allocate memory", at a byte
    before the end: SD201 called a cut call "invalid" (the buffer is not JSON) where it is truncated."""
    _cut_is_truncated(depth, shapes, cut)


@pytest.mark.parametrize("shapes", [["array"], ["object"], ["pair"], ["array", "object"]])
@pytest.mark.parametrize("depth", [500, 1000, 1100])
@pytest.mark.parametrize("cut", [0.3, 0.5, 0.99])
def test_arguments_cut_some_hundred_levels_deep_are_truncated(depth: int, shapes: list[str], cut: float) -> None:
    """The depths where orjson gives up (hypothesis draws them seldom)."""
    _cut_is_truncated(depth, shapes, cut)


def _cut_is_truncated(depth: int, shapes: list[str], cut: float) -> None:
    text = _mixed(depth, shapes)
    prefix = text[: max(1, int(len(text) * cut))]
    _, failure, _ = parse_arguments(prefix, [len(prefix)])
    assert failure is not None and failure.kind in ("truncated", "unterminated-string"), (depth, failure)


@pytest.mark.parametrize("shapes", [["array"], ["object"], ["pair", "object"]])
@pytest.mark.parametrize("depth", [READ_DEPTH, READ_DEPTH + 1, 5000])
def test_whole_arguments_past_what_orjson_reads_are_too_deep_and_shallower_ones_parse(
    shapes: list[str], depth: int
) -> None:
    value, failure, _ = parse_arguments(_mixed(depth, shapes), [10])
    if depth <= READ_DEPTH:
        assert failure is None and isinstance(value, dict)
    else:
        assert failure is not None and failure.kind == "too-deep" and "was not checked" in failure.detail


def test_near_miss_a_deep_text_that_is_not_json_is_still_invalid() -> None:
    """Brackets that close the wrong container, 900 levels down, within what orjson reads."""
    _, failure, _ = parse_arguments('{"x":' + "[" * 900 + "}" + "]" * 899 + "}", [10])
    assert failure is not None and failure.kind == "invalid"


@pytest.mark.parametrize(("depth", "severities"), [(1030, [Severity.INFO]), (1024, [])])
def test_streamed_arguments_too_deep_to_read_are_an_info_sd201(
    tmp_path: Path, depth: int, severities: list[Severity]
) -> None:
    """Past 1,024 levels SD201 said "arguments do not parse (invalid) … The buffer is not JSON", an error, of
    JSON that may well be valid; at 1,024 levels they parse (near miss)."""
    path = _anthropic_call(tmp_path / "deep.sse", '{"q": ' + nested(depth - 1, "array") + "}")
    found = replay(str(path)).findings
    assert [f.severity for f in found if f.code == "SD201"] == severities
    assert all(f.severity < Severity.WARNING for f in found), found


@pytest.mark.parametrize(("depth", "leaf", "noted"), [(DEEP, 1, 0), (DEEP, 2, 1), (SHALLOW, 2, 1)])
def test_serve_matches_a_request_whose_metadata_nests_deeply(depth: int, leaf: int, noted: int) -> None:
    """``serve`` compared the fields the answer does not depend on with ``!=``: a request with metadata 990
    levels deep ended the server's matching with RecursionError. The same metadata is no note, another is
    noted (and served), as at 200 levels."""
    from stream_doctor.serve.matching import compare

    def body(value: str) -> Any:
        return orjson.loads('{"model": "m", "messages": [], "metadata": ' + value + "}")

    difference = compare("anthropic", {"body": body(nested(depth, "array"))}, body(nested(depth, "array", leaf)))
    assert difference.refused == () and len(difference.noted) == noted


@pytest.mark.parametrize(("depth", "cut", "codes"), [(1030, False, ["SD201"]), (1000, True, ["SD201", "SD801"])])
def test_a_client_is_not_faulted_on_arguments_too_deep_to_read(
    tmp_path: Path, depth: int, cut: bool, codes: list[str]
) -> None:
    """anthropic-typescript's model hands the call at its block's stop, as JSON.parse reads it: SD801 said it
    "would run it although its arguments do not parse", of arguments the reference could not read (too-deep,
    now not compared); the near miss, the same arguments cut, is still SD801."""
    text = '{"q": ' + nested(depth - 1, "array") + "}"
    path = _anthropic_call(tmp_path / "deep.sse", text[: len(text) // 2] if cut else text)
    report = replay(str(path), clients=["anthropic-typescript"], client_mode="model")
    assert sorted(f.code for f in report.findings) == codes


EXECUTED = ROOT / "fixtures/anthropic/executed_input_differs.jsonl"


@pytest.mark.parametrize(("depth", "leaf", "differs"), [(DEEP, 1, False), (DEEP, 2, True), (SHALLOW, 2, True)])
def test_an_execution_of_deep_arguments_is_compared_in_the_html_report(
    tmp_path: Path, depth: int, leaf: int, differs: bool
) -> None:
    """The HTML report compared what ran with the streamed arguments with ``==`` and raised at 990 levels;
    SD103 says whether they differ, as at 200 levels."""
    from stream_doctor.reporters import RenderOptions
    from stream_doctor.reporters.html import render

    deltas = iter([json.dumps('{"location": ' + nested(depth, "array") + "}")])
    lines = []
    for line in EXECUTED.read_text().splitlines():
        if '"sd":"execute"' in line:
            line = line[: line.index('"input":')] + '"input":{"location": ' + nested(depth, "array", leaf) + "}}"
        lines.append(PARTIAL.sub(lambda _: '"partial_json":' + next(deltas, '""'), line))
    path = tmp_path / "deep.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = replay(str(path))
    assert ("SD103" in report.codes) is differs
    assert "SD103" in render(report, RenderOptions()) or not differs


def _openai_call(path: Path, arguments: str) -> Path:
    """One OpenAI Chat Completions call streaming ``arguments`` in two fragments."""
    chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m"}
    start = {"index": 0, "id": "call_0", "type": "function", "function": {"name": "nest", "arguments": ""}}
    deltas = [{"tool_calls": [start]}] + [
        {"tool_calls": [{"index": 0, "function": {"arguments": part}}]}
        for part in (arguments[: len(arguments) // 2], arguments[len(arguments) // 2 :])
    ]
    choices = [[{"index": 0, "delta": delta, "finish_reason": None}] for delta in deltas]
    choices.append([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}])
    path.write_text("".join(f"data: {json.dumps({**chunk, 'choices': c})}\n\n" for c in choices) + "data: [DONE]\n\n")
    return path


def _bedrock_call(path: Path, arguments: str) -> Path:
    """One Bedrock ConverseStream call (JSON lines) streaming ``arguments`` in two fragments."""
    start = {"start": {"toolUse": {"toolUseId": "tooluse_0", "name": "nest"}}, "contentBlockIndex": 0}
    records = [{"messageStart": {"role": "assistant"}}, {"contentBlockStart": start}]
    for part in (arguments[: len(arguments) // 2], arguments[len(arguments) // 2 :]):
        records.append({"contentBlockDelta": {"delta": {"toolUse": {"input": part}}, "contentBlockIndex": 0}})
    records += [{"contentBlockStop": {"contentBlockIndex": 0}}, {"messageStop": {"stopReason": "tool_use"}}]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


@pytest.mark.slow
@pytest.mark.parametrize(
    "write", [_anthropic_call, _openai_call, _bedrock_call], ids=["anthropic", "openai", "bedrock"]
)
@pytest.mark.parametrize("kind", ["array", "object"])
@pytest.mark.parametrize(("depth", "cut"), [(1000, False), (1000, True), (1030, False)])
def test_every_replay_format_and_check_answer_deep_arguments(
    tmp_path: Path, write: Callable[[Path, str], Path], kind: str, depth: int, cut: bool
) -> None:
    """The CLI in a subprocess under the adversarial tests' address-space limit: each format and ``check``
    exit 0 or 1 with their report (never 2, a traceback or a second line), SD201 an error only when cut."""
    text = '{"q": ' + nested(depth - 1, kind) + "}"
    path = write(
        tmp_path / f"deep.{'jsonl' if write is _bedrock_call else 'sse'}", text[: len(text) // 2] if cut else text
    )
    ran = run_cli("replay", path.name, "--format", "json", cwd=tmp_path)
    assert ran.code == (1 if cut else 0) and ran.err == "", ran.err
    sd201 = [f["severity"] for f in json.loads(ran.out)["findings"] if f["code"] == "SD201"]
    assert sd201 == (["error"] if cut else ["info"] if depth > READ_DEPTH else [])
    for args in [(), ("--format", "html", "-o", "r.html"), ("--client", "langchain")]:
        ran = run_cli("replay", path.name, *args, cwd=tmp_path)
        assert ran.code in (0, 1) and ran.err == "" and 0 < ran.peak_kb < PEAK_BOUND_KB, (args, ran.err)
    ran = run_cli("check", path.name, "-r", "sarif:out.sarif", "-r", "junit:out.xml", cwd=tmp_path)
    assert ran.code in (0, 1) and ran.err == "" and json.loads((tmp_path / "out.sarif").read_text())


@pytest.mark.slow
def test_a_deep_echoed_conversation_through_every_command(tmp_path: Path) -> None:
    """replay, check, convert (and the envelope replayed), minimize and fixture on the 990-level echo."""
    path = _cassette(tmp_path, _streamed_and_echoed(nested(DEEP, "array")), ("", nested(DEEP, "array", 2)))
    replayed = run_cli("replay", path.name, "--format", "json", cwd=tmp_path)
    codes = sorted(f["code"] for f in json.loads(replayed.out)["findings"])
    assert replayed.err == "" and codes == ["SD609", "SD706"]
    assert run_cli("check", path.name, "-r", "sarif:out.sarif", cwd=tmp_path).err == ""
    assert run_cli("convert", path.name, "-o", "deep.jsonl", cwd=tmp_path).code == 0
    again = run_cli("replay", "deep.jsonl", "--format", "json", cwd=tmp_path)
    assert sorted(f["code"] for f in json.loads(again.out)["findings"]) == codes
    minimized = run_cli(
        "minimize", path.name, "--keep", "SD609", "-o", "min.jsonl", "--max-seconds", "20", cwd=tmp_path
    )
    assert minimized.code == 0, minimized.err
    fixture = run_cli(
        "fixture", path.name, "--keep", "SD609", "-o", "fx/deep.jsonl", "--max-seconds", "20", cwd=tmp_path
    )
    assert fixture.code == 0 and (tmp_path / "fx/test_deep.py").exists(), fixture.err


@pytest.mark.parametrize(
    ("value", "shown"), [(nested(600, "array"), False), ('"' + "x" * 100_000 + '"', False), ("[1, 2]", True)]
)
def test_a_violation_quotes_a_long_value_clipped_as_json(value: str, shown: bool) -> None:
    """jsonschema's message holds the whole value as Python's repr: 600 levels of brackets, or a 100 KB string,
    reached the finding whole. Past 120 characters it is JSON, clipped with "…"; a short value is as before."""
    tool = ToolDef("f", {"type": "object", "properties": {"a": {"type": "integer"}}}, "tools[0].input_schema")
    (violation,) = violations(tool, orjson.loads('{"a": ' + value + "}"))
    assert violation.message.endswith(" is not of type 'integer'") and len(violation.message) < 160
    assert ("…" not in violation.message) is shown


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (
            '{"a":' + nested(1030, "array") + "}",
            "not JSON to the reader: depth limit exceeded: it nests deeper than 1,024",
        ),
        ('{"a":' + "[" * 600, "not JSON: it ends with 601 containers open"),
        ('{"a":' + "[" * 20, "not JSON: unexpected end of data"),  # near miss: orjson's own words, as before
    ],
)
def test_a_frame_orjson_gives_up_on_for_its_nesting_is_said_so(tmp_path: Path, line: str, said: str) -> None:
    """SD001 said "not JSON: failed to allocate memory" of a frame cut 600 levels deep, and "depth limit
    exceeded" of one deeper than orjson reads (which the Python SDKs' json.loads refuses too)."""
    path = tmp_path / "deep.sse"
    path.write_bytes((ROOT / "fixtures/gemini/one_call.sse").read_bytes() + f"data: {line}\n\n".encode())
    (finding,) = [f for f in replay(str(path)).findings if f.code == "SD001"]
    assert said in finding.message
