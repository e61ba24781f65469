"""--redact keeps what a finding needs and nothing else, in every framing; without it, ids and names stay readable.

A marker is planted in every field the capture generators can produce (``marked_captures``); after
``minimize --redact`` (with the full search, and with redaction alone) and after ``fixture``, no
letter of it is left in what is written, the kept finding still fires, and redacting the result
again gives it back. Redaction costs a bounded number of replays, whatever the capture's size.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import stream_doctor
from benchmarks.sessions import session
from stream_doctor.cli import app
from stream_doctor.minimizer.redact import KINDS
from stream_doctor.minimizer.whitelist import is_masked, mask, mask_id, mask_json_text, mask_sse_text, mask_url
from stream_doctor.values.findings import Severity
from tests.conftest import FIXTURES
from tests.json_values import json_text, json_values
from tests.minimize.marked_captures import CASES, MARKER, framed_sse
from tests.minimize.test_fixtures import CASES as FIXTURE_CASES
from tests.test_adversarial import PEAK_BOUND_KB, run_cli

runner = CliRunner()
#: The marker's first six letters: a value cut to a prefix, or an id that kept its first characters, shows them.
_TRACE = MARKER[:6]


def _leaks(data: bytes) -> list[str]:
    text = data.decode("utf-8", "replace")
    return [text[max(0, at - 40) : at + 20] for at in (m.start() for m in re.finditer(_TRACE, text, re.IGNORECASE))]


@pytest.mark.parametrize("max_seconds", [None, 0], ids=["searched", "redaction-alone"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_no_planted_marker_survives_and_the_finding_stays(case: str, max_seconds: float | None) -> None:
    generate, code = CASES[case]
    data = generate()
    assert _leaks(data)  # planted
    result = stream_doctor.minimize(data, code, redact=True, max_seconds=max_seconds)
    assert _leaks(result.data) == []
    assert not result.kept_values  # nothing had to be let stay
    with stream_doctor.replay(result.data) as small, stream_doctor.replay(data) as original:
        assert code in small.codes
        before = {f.code for f in original.findings if f.severity >= Severity.WARNING}
        assert {f.code for f in small.findings if f.severity >= Severity.WARNING} <= before
    again = stream_doctor.minimize(result.data, code, redact=True, max_seconds=max_seconds)
    assert again.data == result.data  # docs/minimize.md: minimizing the result again gives it back


@pytest.mark.slow  # the CLI in a child process under an address-space limit, twice (2.3 s of CPU)
@pytest.mark.parametrize("max_seconds", ["60", "0"], ids=["searched", "redaction-alone"])
def test_fixture_writes_no_marker_in_the_capture_or_the_test(tmp_path: Path, max_seconds: str) -> None:
    capture = tmp_path / "session.jsonl"
    capture.write_bytes(CASES["envelope"][0]())
    out = tmp_path / "fixtures" / "bug.jsonl"
    out.parent.mkdir()
    ran = run_cli("fixture", str(capture), "-k", "SD102", "-o", str(out), "--max-seconds", max_seconds)
    assert ran.code == 0 and ran.peak_kb < PEAK_BOUND_KB, ran.err
    written = sorted(out.parent.iterdir())
    assert len(written) == 2
    for path in written:
        assert _leaks(path.read_bytes()) == [], path.name
    with stream_doctor.replay(str(out)) as small:
        assert "SD102" in small.codes


@pytest.mark.slow  # the CLI in a child process under an address-space limit, per case (3.5 s of CPU)
@pytest.mark.parametrize("redact", [True, False], ids=["redact", "near-miss"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_minimize_redact_run_as_the_cli_under_the_address_space_limit(tmp_path: Path, case: str, redact: bool) -> None:
    """Issue 31's row as a user meets it: ``minimize --redact`` with redaction alone, the CLI in a child under the
    adversarial tests' address-space limit, writes no letter of a planted marker and keeps its finding. The
    near miss, without ``--redact``: the marker is written as the capture held it (the grep would see a leak)."""
    generate, code = CASES[case]
    extension = ".sse" if case in ("sse", "responses-sse") else ".jsonl"  # what minimize writes for each
    capture, out = tmp_path / f"capture{extension}", tmp_path / f"small{extension}"
    capture.write_bytes(generate())
    ran = run_cli("minimize", str(capture), "-k", code, "-o", str(out), "--max-seconds", "0", *(["--redact"] * redact))
    assert ran.code == 0 and ran.peak_kb < PEAK_BOUND_KB, ran.err
    assert (_leaks(out.read_bytes()) == []) is redact
    with stream_doctor.replay(str(out)) as small:
        assert code in small.codes


def test_without_redact_ids_keep_their_prefix_and_tools_their_name() -> None:
    data = (FIXTURES / "anthropic" / "empty_input_bug.jsonl").read_bytes()
    result = stream_doctor.minimize(data, "SD102")
    with stream_doctor.replay(result.data) as small:
        (call,) = small.calls
        assert call.name == "write_file"
        assert call.call_id is not None and re.fullmatch(r"toolu_\d+", call.call_id)
        (finding,) = [f for f in small.findings if f.code == "SD102"]
        assert "write_file" in finding.message and "(no id)" not in finding.message
    again = stream_doctor.minimize(result.data, "SD102")
    assert again.data == result.data


def test_with_redact_an_id_keeps_its_prefix_and_none_of_its_own_characters() -> None:
    data = (FIXTURES / "anthropic" / "empty_input_bug.jsonl").read_bytes()
    original = "toolu_01gcx3DpVvg6wzPCEBtz4hRD"
    assert original.encode() in data
    result = stream_doctor.minimize(data, "SD102", redact=True, max_seconds=0)
    with stream_doctor.replay(result.data) as small:
        (call,) = small.calls
        assert call.call_id is not None and call.call_id.startswith("toolu_")
        assert is_masked(call.call_id.removeprefix("toolu_"))
        assert call.name is not None and call.name != "write_file" and len(call.name) == len("write_file")
    assert b"01gcx3" not in result.data and b"write_file" not in result.data


def test_a_kind_a_finding_needs_is_let_stay_in_one_replay_more_per_kind(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # stands for a finding that needs the ids: a rewrite that made every id one loses SD102's pairing
    from stream_doctor.minimizer import redact

    monkeypatch.setattr(redact, "mask_id", lambda text: "toolu_x")
    result = stream_doctor.minimize(CASES["envelope"][0](), "SD102", redact=True, max_seconds=0)
    assert [f.code for f in result.kept] == ["SD102"]
    assert set(result.kept_values) == {"ids"} and result.checks <= len(KINDS) + 2
    assert "argument values" in result.replaced
    # the ids, and only they, stayed: every marker left is the value of an id field
    text = result.data.decode()
    keys = re.findall(rf'"(\w+)":"[^"]*{MARKER}', text)
    assert keys and len(keys) == text.count(MARKER) and all(key.lower().endswith("id") for key in keys)


def test_call_keeps_its_findings_under_redact_and_its_id_is_masked_too() -> None:
    data = (FIXTURES / "anthropic" / "executed_twice.jsonl").read_bytes()
    with stream_doctor.replay(data) as report:
        wanted = next(f.call_id for f in report.findings if f.code == "SD105")
        number = report.matching(wanted)[0]
    assert wanted is not None
    for max_seconds in (None, 0):
        result = stream_doctor.minimize(data, "SD105", call=number, redact=True, max_seconds=max_seconds)
        assert result.kept and all(f.code == "SD105" for f in result.kept)
        assert "ids" not in result.kept_values and wanted.encode() not in result.data


def test_redaction_is_a_bounded_number_of_replays_whatever_the_size() -> None:
    # nothing is searched (max_seconds=0): every replay is redaction's, and there are at most one per kind
    # let stay, the first candidate and the report its fragments are read from
    small = stream_doctor.minimize(
        session("anthropic", 3, broken=2, personal=True, words=8), "SD102", redact=True, max_seconds=0
    )
    large = stream_doctor.minimize(
        session("anthropic", 30, broken=17, personal=True, words=8), "SD102", redact=True, max_seconds=0
    )
    assert small.checks == large.checks == 1
    # a capture whose provider is told by its ids' shape: they stay hex, so nothing else had to stay
    mistral = (FIXTURES / "mistral" / "stream_cut_before_finish.sse").read_bytes()
    redacted = stream_doctor.minimize(mistral, "SD303", redact=True, max_seconds=0)
    assert not redacted.kept_values and redacted.checks == 1 and redacted.provider == "mistral"
    assert b"e51db4c0110c2515eee4e2dce962df97" not in redacted.data


# -- the masks ------------------------------------------------------------------------------------

_TEXT = json_text(30)
_JSON = json_values(30, 4, 12)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(_JSON, _TEXT)
def test_masked_json_text_keeps_keys_shape_and_length_and_no_letter_of_a_value(value: object, planted: str) -> None:
    text = orjson.dumps([value, f"{MARKER}{planted}"]).decode()
    masked = mask_json_text(text)
    assert len(masked) == len(text)
    assert MARKER not in masked and _TRACE not in masked
    parsed = orjson.loads(masked)
    assert _shape(parsed) == _shape([value, ""])  # the same keys, numbers, literals and nesting
    assert mask_json_text(masked) == masked  # idempotent: redacting a redacted capture gives it back


def _shape(value: object) -> object:
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return "s" if isinstance(value, str) else value


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(_TEXT, _TEXT)
def test_a_mask_keeps_length_and_punctuation_and_no_letter(first: str, planted: str) -> None:
    text = f"{first}{MARKER}{planted}"
    assert len(mask(text)) == len(text)
    assert mask(mask(text)) == mask(text) and is_masked(mask(text))
    assert [c for c in mask(text) if not c.isalnum()] == [c for c in text if not c.isalnum()]
    assert _TRACE not in mask(text).upper()


def test_two_values_of_one_shape_stay_apart() -> None:
    # near miss of a letter-for-letter mask: Lisbon and Madrid must not become equal (SD103 compares them)
    assert mask("Lisbon") != mask("Madrid") and len(mask("Lisbon")) == 6
    assert mask_id("toolu_01gcx3DpVvg6") != mask_id("toolu_01gcx3DpVvg7")
    assert mask_id("toolu_12") == "toolu_12"  # the minimizer's own numbering: nobody's data
    hex_id = mask_id("e51db4c0110c2515eee4e2dce962df97")
    assert re.fullmatch(r"0{24}[0-9a-f]{8}", hex_id) and mask_id(hex_id) == hex_id
    assert mask_id("cmpl-e51db4c0110c2515eee4e2dce962df97").startswith("cmpl-000")


def test_sse_text_keeps_its_field_and_event_names_and_masks_the_rest() -> None:
    text = f"event: content_block_delta\nid: {MARKER}\n: {MARKER}\nevent: {MARKER} two\nretry: 10\nx{MARKER}: v\n"
    masked = mask_sse_text(text + "data: [DONE]\n\n", lambda data: data)
    lines = masked.splitlines()
    assert lines[0] == "event: content_block_delta" and lines[4] == "retry: 10" and lines[6] == "data: [DONE]"
    assert [line.partition(":")[0] for line in lines[1:4]] == ["id", "", "event"]  # the field stays, its value not
    assert _TRACE not in masked.upper() and mask_sse_text(masked, lambda data: data) == masked


def test_a_url_keeps_where_it_goes_and_nothing_it_carries() -> None:
    url = f"https://me:{MARKER}@api.example.com:8443/v1/messages?alt=sse&key={MARKER}#{MARKER}"
    masked = mask_url(url)
    assert masked.startswith("https://api.example.com:8443/v1/messages?alt=sse&key=")
    assert _TRACE not in masked
    assert mask_url(masked) == masked


# -- the class: any arguments, cut into fragments anywhere --------------------------------------------

_KEY = st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True)
_VALUE_TEXT = st.builds(lambda a, b: f"{a}{MARKER}{b}", _TEXT, _TEXT)
_ARGUMENT = st.recursive(
    st.integers(-1000, 1000) | st.booleans() | st.none() | _VALUE_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEY, inner, max_size=3),
    max_leaves=6,
)


def _one_call(arguments: dict[str, object], cuts: list[int]) -> bytes:
    """An Anthropic envelope of one call streamed in fragments cut at ``cuts`` and run with ``{}`` (SD102)."""
    text = orjson.dumps(arguments).decode()
    points = sorted({0, *(cut % (len(text) + 1) for cut in cuts), len(text)})
    pieces = [text[a:b] for a, b in zip(points, points[1:], strict=False)]
    block = {"type": "tool_use", "id": f"toolu_{MARKER}", "name": "save", "input": {}}
    events = [
        {"type": "message_start", "message": {"id": f"msg_{MARKER}", "type": "message", "role": "assistant",
                                              "content": [], "model": "claude", "usage": {"input_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": block},
        *({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": piece}}
          for piece in pieces),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]  # fmt: skip
    records: list[dict[str, object]] = [{"sd": "event", "data": event} for event in events]
    records.append({"sd": "execute", "call_id": f"toolu_{MARKER}", "name": "save", "input": {}})
    return b"".join(orjson.dumps(record) + b"\n" for record in records)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.dictionaries(_KEY, _ARGUMENT, min_size=1, max_size=4), st.lists(st.integers(0, 10_000), max_size=6))
def test_any_arguments_cut_anywhere_are_masked_and_still_join_to_the_same_keys(
    arguments: dict[str, object], cuts: list[int]
) -> None:
    data = _one_call(arguments, cuts)
    with stream_doctor.replay(data) as original:
        assert "SD102" in original.codes
    result = stream_doctor.minimize(data, "SD102", redact=True, max_seconds=0)
    assert _leaks(result.data) == [] and not result.kept_values
    with stream_doctor.replay(result.data) as small:
        (call,) = small.calls
        assert isinstance(call.arguments, dict)
        assert _shape(call.arguments) == _shape(arguments)  # the fragments still join into the same JSON


def test_the_anthropic_sdk_decodes_the_redacted_sse_into_the_same_events() -> None:
    # the real decoder fed the bytes: comments and id: lines masked, the multi-line data joined, and
    # still the same events, with the same names, each data one JSON text of the same type
    decoder = pytest.importorskip("anthropic._streaming").SSEDecoder
    original = CASES["sse"][0]()
    redacted = stream_doctor.minimize(original, "SD301", redact=True, max_seconds=0).data

    def events(data: bytes) -> list[tuple[str | None, str]]:
        return [(event.event, orjson.loads(event.data)["type"]) for event in decoder().iter_bytes(iter([data]))]

    assert events(redacted) == events(original)
    assert all(event.id is None or _TRACE not in event.id for event in decoder().iter_bytes(iter([redacted])))


def test_when_no_rewrite_keeps_the_finding_it_is_one_line_and_nothing_is_written(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # stands for a finding that depends on a secret: every rewrite, even with every kind let stay, loses it
    from stream_doctor.minimizer.redact import Whitelist
    from stream_doctor.minimizer.units import Unit

    monkeypatch.setattr(Whitelist, "unit", lambda self, index, unit, container: Unit(b"", unit.kind, unit.turn))
    capture = tmp_path / "session.jsonl"
    capture.write_bytes((FIXTURES / "anthropic" / "empty_input_bug.jsonl").read_bytes())
    out = tmp_path / "small.jsonl"
    result = runner.invoke(app, ["minimize", str(capture), "-k", "SD102", "-o", str(out), "--redact"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"stream-doctor: error: {capture}: redacted, it no longer shows SD102: a finding depends on a secret; "
        "minimize it without --redact and mask it by hand"
    ]
    assert not out.exists()


_FRAMING = st.lists(st.tuples(st.booleans(), st.booleans(), st.frozensets(st.integers(0, 12), max_size=4)), max_size=6)


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(_FRAMING, st.sampled_from(["\n", "\r\n", "\r"]))
def test_any_sse_framing_is_masked_and_the_sdk_reads_the_same_events(
    framing: list[tuple[bool, bool, frozenset[int]]], ending: str
) -> None:
    decoder = pytest.importorskip("anthropic._streaming").SSEDecoder
    original = framed_sse(framing, ending)

    def events(data: bytes) -> list[tuple[str | None, str]]:
        return [(event.event, orjson.loads(event.data)["type"]) for event in decoder().iter_bytes(iter([data]))]

    result = stream_doctor.minimize(original, "SD301", redact=True, max_seconds=0)
    assert _leaks(result.data) == [] and not result.kept_values
    assert events(result.data) == events(original)
    assert stream_doctor.minimize(result.data, "SD301", redact=True, max_seconds=0).data == result.data


def test_the_helper_logs_copy_of_a_fragment_is_masked_as_the_fragment_is() -> None:
    # the input_json event repeats the delta before it: masked alone, a fragment that starts inside a
    # string would be read out of step (a digit kept as a number); it is masked as the delta it copies
    result = stream_doctor.minimize(CASES["helper-log"][0](), "SD301", redact=True, max_seconds=0)
    records = [orjson.loads(line) for line in result.data.splitlines()]
    copies = [
        (before, after) for before, after in zip(records, records[1:], strict=False) if after["type"] == "input_json"
    ]
    assert len(copies) == 2
    for delta, copy in copies:
        assert copy["partial_json"] == delta["delta"]["partial_json"] != ""


@pytest.mark.parametrize("fixture", FIXTURE_CASES)
def test_every_fixture_case_is_redacted_alone_with_its_findings_and_nothing_let_stay(fixture: str) -> None:
    data = (FIXTURES / fixture).read_bytes()
    with stream_doctor.replay(data, name=fixture) as original:
        keep = sorted({f.code for f in original.findings if f.severity >= Severity.WARNING})
    result = stream_doctor.minimize(data, keep, name=fixture, redact=True, max_seconds=0)
    assert {f.code for f in result.kept} == set(keep)
    assert not result.kept_values
    again = stream_doctor.minimize(result.data, keep, name=fixture, redact=True, max_seconds=0)
    assert again.data == result.data
