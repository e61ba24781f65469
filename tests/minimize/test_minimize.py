"""stream_doctor.minimize: what the result holds, how it is bounded, and what --redact leaves out."""

from __future__ import annotations

import re

import orjson
import pytest

import stream_doctor
from benchmarks.sessions import SECRET, USER_MARKER, session
from stream_doctor.minimizer.ddmin import ddmin
from stream_doctor.minimizer.run import Progress
from stream_doctor.values.findings import Severity
from tests import planted_secrets
from tests.conftest import FIXTURES

EMPTY_INPUT = FIXTURES / "anthropic" / "empty_input_bug.jsonl"


@pytest.fixture(scope="module")
def thirty_turns() -> bytes:
    return session("anthropic", 30, broken=17, personal=True, words=8)


def _events(data: bytes) -> int:
    with stream_doctor.replay(data) as report:
        return sum(report.event_counts.values())


def test_ddmin_finds_a_one_minimal_sublist() -> None:
    needed = {3, 11}
    tried: list[list[int]] = []

    def accepts(items: list[int]) -> bool:
        tried.append(items)
        return needed <= set(items)

    assert ddmin(list(range(20)), accepts) == [3, 11]
    assert ddmin(list(range(20)), accepts) == [3, 11]  # deterministic: the same candidates, in order
    assert tried[: len(tried) // 2] == tried[len(tried) // 2 :]
    assert ddmin([7], lambda items: bool(items), keep_one=True) == [7]


def test_a_thirty_turn_conversation_shrinks_to_the_broken_call(thirty_turns: bytes) -> None:
    result = stream_doctor.minimize(thirty_turns, "SD102", name="session.jsonl")

    assert result.size_before == len(thirty_turns) > 500_000
    assert result.size_after < 2_000
    assert result.frames_after <= 10 < result.frames_before
    assert [f.code for f in result.kept] == ["SD102"]
    assert result.container == "envelope" and not result.converted and not result.stopped_early
    with stream_doctor.replay(result.data) as small:
        assert len(small.calls) == 1
        assert not [f for f in small.findings if f.severity >= Severity.WARNING and f.code != "SD102"]


def test_the_result_is_the_same_for_the_same_input() -> None:
    data = EMPTY_INPUT.read_bytes()
    first = stream_doctor.minimize(data, "SD102")
    second = stream_doctor.minimize(data, ["SD102"])
    assert first.data == second.data and first.checks == second.checks


def test_a_path_and_its_bytes_give_the_same_result() -> None:
    by_path = stream_doctor.minimize(str(EMPTY_INPUT), "SD102")
    by_bytes = stream_doctor.minimize(EMPTY_INPUT.read_bytes(), "SD102", name=str(EMPTY_INPUT))
    assert by_path.data == by_bytes.data


def test_out_of_time_it_returns_the_best_so_far(thirty_turns: bytes) -> None:
    result = stream_doctor.minimize(thirty_turns, "SD102", max_seconds=0)
    assert result.stopped_early
    assert result.data == thirty_turns  # nothing was replayed in time: the input is the best so far
    assert [f.code for f in result.kept] == ["SD102"]


def test_progress_reports_each_step_and_the_size_only_falls(thirty_turns: bytes) -> None:
    seen: list[Progress] = []
    stream_doctor.minimize(thirty_turns, "SD102", progress=seen.append)
    assert seen and {step.stage for step in seen} >= {"turns the findings point at", "frames", "strings"}
    sizes = [step.size for step in seen]
    assert sizes == sorted(sizes, reverse=True)
    assert [step.checks for step in seen] == sorted(step.checks for step in seen)


def test_a_kept_code_that_does_not_fire_names_the_codes_that_do() -> None:
    with pytest.raises(stream_doctor.MinimizeError, match=r"SD301 does not fire \(it shows: SD102, SD705\)"):
        stream_doctor.minimize(EMPTY_INPUT.read_bytes(), "SD301", name="bug.jsonl")


def test_keep_takes_whole_codes() -> None:
    with pytest.raises(ValueError, match="whole rule codes"):
        stream_doctor.minimize(EMPTY_INPUT.read_bytes(), "SD1")
    with pytest.raises(ValueError, match="no rule code"):
        stream_doctor.minimize(EMPTY_INPUT.read_bytes(), "SDX99")


def test_an_unreadable_capture_is_a_run_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(stream_doctor.RunError, match="no such file"):
        stream_doctor.minimize(str(tmp_path / "missing.sse"), "SD102")
    with pytest.raises(stream_doctor.RunError):
        stream_doctor.minimize(b"", "SD102")


def test_call_keeps_the_findings_of_that_call() -> None:
    data = (FIXTURES / "anthropic" / "executed_twice.jsonl").read_bytes()
    with stream_doctor.replay(data) as report:
        wanted = next(f.call_id for f in report.findings if f.code == "SD105")
        number = report.matching(wanted)[0]
    result = stream_doctor.minimize(data, "SD105", call=number)
    assert result.kept and all(f.code == "SD105" for f in result.kept)
    with pytest.raises(stream_doctor.MinimizeError, match="no call '99'"):
        stream_doctor.minimize(data, "SD105", call=99)


def test_a_container_that_cannot_hold_the_result_becomes_an_envelope() -> None:
    data = (FIXTURES / "conversations" / "anthropic_echo_empty_input.yaml").read_bytes()
    result = stream_doctor.minimize(data, "SD608", name="cassette.yaml")
    assert result.converted and result.container == "envelope"
    assert result.size_after < result.size_before
    assert orjson.loads(result.data.splitlines()[0])["sd"] in ("header", "request", "event")


def test_a_converted_capture_out_of_time_is_its_envelope_or_itself_whichever_is_smaller() -> None:
    data = (FIXTURES / "conversations" / "anthropic_echo_empty_input.yaml").read_bytes()
    result = stream_doctor.minimize(data, "SD608", name="cassette.yaml", max_seconds=0)
    assert result.stopped_early and result.size_after <= len(data)
    assert (result.container, result.converted) in (("envelope", True), ("vcr", False))
    assert [f.code for f in result.kept] == ["SD608"]


def test_sse_stays_sse_byte_for_byte_in_what_it_keeps() -> None:
    data = (FIXTURES / "anthropic" / "abandoned_at_max_tokens.sse").read_bytes()
    result = stream_doctor.minimize(data, "SD301")
    assert result.container == "sse" and result.data.startswith(b"event: ")
    blocks = [block for block in result.data.split(b"\n\n") if block]
    assert len(blocks) == result.frames_after < result.frames_before


# -- --redact ---------------------------------------------------------------------------------------


def _survivors(data: bytes, planted: tuple[str, ...]) -> list[str]:
    text = data.decode("utf-8", "replace")
    return [marker for marker in planted if marker in text]


PLANTED = (USER_MARKER, "Alice", "Placeholder", SECRET, "PLANTEDsecret", "toolu_01")


@pytest.mark.parametrize("max_seconds", [None, 0], ids=["minimized", "not-minimized"])
def test_redact_leaves_no_user_text_secret_or_id_and_keeps_the_finding(thirty_turns: bytes, max_seconds) -> None:  # type: ignore[no-untyped-def]
    # max_seconds=0: nothing is removed, so redaction alone must clear all 30 turns
    result = stream_doctor.minimize(thirty_turns, "SD102", redact=True, max_seconds=max_seconds)
    assert _survivors(result.data, PLANTED) == []
    assert [f.code for f in result.kept] == ["SD102"]
    with stream_doctor.replay(result.data) as small:
        assert "SD102" in small.codes
        assert not [f for f in small.findings if f.severity >= Severity.WARNING and f.code != "SD102"]
    if max_seconds == 0:
        assert {"secrets", "ids", "user text", "argument values", "header notes"} <= set(result.replaced)
        assert not result.kept_values


def test_redact_masks_argument_values_letter_for_letter_so_the_fragments_still_join() -> None:
    data = EMPTY_INPUT.read_bytes()
    result = stream_doctor.minimize(data, "SD102", redact=True, max_seconds=0)
    with stream_doctor.replay(result.data) as small:
        (call,) = small.calls
        assert call.arguments is not None and set(call.arguments) == {"path", "content"}
        # was notes/todo.md: each letter replaced, its punctuation kept
        assert re.fullmatch(r"[qxzj]{5}/[qxzj]{4}\.[qxzj]{2}", call.arguments["path"])
        assert "TLS" not in result.data.decode()


def test_redact_clears_every_planted_secret_of_an_envelope_and_keeps_sd103(tmp_path) -> None:  # type: ignore[no-untyped-def]
    records = planted_secrets.anthropic_envelope()
    data = b"".join(orjson.dumps(record) + b"\n" for record in records)
    with stream_doctor.replay(data) as original:
        keep = sorted({f.code for f in original.findings if f.severity >= Severity.WARNING})
    assert "SD103" in keep
    result = stream_doctor.minimize(data, keep, redact=True, max_seconds=0)
    assert _survivors(result.data, planted_secrets.SECRETS) == []
    assert set(keep) <= {f.code for f in result.kept}


def test_a_value_the_finding_depends_on_is_kept_and_counted() -> None:
    # SD103: the application ran the call with a different path; the two paths differ only in letters,
    # so masking them alike would make them equal and lose the finding: they stay
    data = (FIXTURES / "anthropic" / "executed_input_differs.jsonl").read_bytes()
    result = stream_doctor.minimize(data, "SD103", redact=True, max_seconds=0)
    assert [f.code for f in result.kept] == ["SD103"]
    assert result.kept_values.get("argument values", 0) >= 1 or result.replaced.get("argument values", 0) >= 1


def test_a_value_nested_as_deep_as_json_allows_is_no_traceback_and_no_leak() -> None:
    sse = (FIXTURES / "anthropic" / "abandoned_at_max_tokens.sse").read_bytes()
    deep = b'{"a":' * 1000 + b'"' + SECRET.encode() + b'"' + b"}" * 1000
    hostile = sse.replace(b'{"type": "ping"}', b'{"type": "ping", "x": ' + deep + b"}", 1)
    assert hostile != sse
    redacted = stream_doctor.minimize(hostile, "SD301", redact=True, max_seconds=0)
    assert SECRET.encode() not in redacted.data and [f.code for f in redacted.kept] == ["SD301"]
    assert stream_doctor.minimize(hostile, "SD301").size_after < len(sse)
