"""An answer recorded from its plan's kept lines (``serve.lines``) is the answer the recorder records read by
read: the same envelope, byte for byte, and the same records, lines and positions handed to the live
diagnosis, for every variant's plan; an answer the application left early is recorded by the recorder, as
what it got (the near miss: kept lines must never fill in what was not written)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.captures import write_calls
from stream_doctor.capture.base import Pos
from stream_doctor.record.exchange import stream_end
from stream_doctor.record.writer import EnvelopeWriter, Slice, request_record
from stream_doctor.serve.lines import Kept, Lines, PlanLines
from stream_doctor.serve.recording import Recording
from stream_doctor.serve.variants import VARIANTS, NotApplicable
from stream_doctor.serve.wire import Plan, Recorded, as_recorded
from tests.conftest import FIXTURES
from tests.serve.recorded import recorded_of

#: bodies of each framing the recorder reads: SSE (with CRLF ends and comments; with a payload that is not
#: JSON; cut inside an event), JSON lines, an AWS event stream (read whole at its end)
BODIES = {
    "anthropic/parallel_calls.sse": "anthropic",
    "anthropic/sse_crlf_comments_multiline.sse": "anthropic",
    "anthropic/relay_keepalive_not_json.sse": "anthropic",
    "anthropic/capture_cut_inside_event.sse": "anthropic",
    "openai/parallel_calls.sse": "openai",
    "gemini/interactions_one_call.sse": "gemini",
    "ollama/parallel_calls_one_line.jsonl": "ollama",
    "bedrock/converse_parallel_calls.eventstream": "bedrock",
}

Seen = list[tuple[dict[str, Any], bytes, Pos]]


def _content_type(recorded: Recorded) -> str | None:
    return dict(recorded.headers).get("content-type")


def _answer(lines: PlanLines, times: list[float], whole: bool, cause: str | None = None) -> tuple[bytes, Seen]:
    """One answer of ``lines``' plan recorded into an envelope after a header and a request, ``times`` the
    moments its first ``len(times)`` reads went out; the envelope's bytes and what its observer was handed."""
    seen: Seen = []
    file = io.BytesIO()
    writer = EnvelopeWriter(file, 0.0, lambda record, line, pos: seen.append((record, line, pos)))
    writer.header("anthropic", "test")
    writer.write(request_record(0.0, "POST", "http://127.0.0.1/v1/messages", b"{}", []))
    recording = Recording(lines.exchange(writer), lines.plan.reads, lines)
    recording.times.extend(times)
    if whole:
        recording.whole = times[-1] + 0.5 if times else 0.5
    recording.record_now(cause, 9.0)
    return file.getvalue(), seen


def _times(count: int, step: float) -> list[float]:
    return [1.0 + number * step for number in range(count)]


def _plans(recorded: Recorded) -> list[tuple[str, Plan]]:
    plans = [("as-recorded", as_recorded(recorded))]
    for name, variant in VARIANTS.items():
        try:
            plans.append((name, variant.plan(recorded, 7)))
        except NotApplicable:
            continue
    return plans


def _kept(recorded: Recorded, plan: Plan) -> PlanLines:
    """``plan``'s lines after the two answers that keep them (the first records as ever, the second keeps)."""
    lines = PlanLines(plan, _content_type(recorded), stream_end(recorded.provider))
    for _ in range(2):
        _answer(lines, _times(len(plan.reads), 0.001), True)
    return lines


def _plain(recorded: Recorded, plan: Plan) -> PlanLines:
    """``plan`` recorded by the recorder alone (its lines never kept)."""
    lines = PlanLines(plan, _content_type(recorded), stream_end(recorded.provider))
    lines.refused = True
    return lines


@pytest.mark.parametrize("body", sorted(BODIES))
def test_an_answer_from_kept_lines_is_the_recorders_for_every_variant(body: str) -> None:
    recorded = recorded_of(FIXTURES / body, BODIES[body])
    plans = _plans(recorded)
    assert len(plans) > 5
    for name, plan in plans:
        kept = _kept(recorded, plan)
        assert kept.lines is not None, name  # (the bodies are far from the recorder's limits)
        times = _times(len(plan.reads), 0.0123457)  # other times than those the lines were kept with
        cause = "the server cut the stream as its plan says" if plan.then == "close" else None
        assert _answer(kept, times, plan.then == "end", cause) == _answer(
            _plain(recorded, plan), times, plan.then == "end", cause
        ), name


def test_a_long_answer_from_kept_lines_is_the_recorders(tmp_path: Path) -> None:
    """Many slices of reads, calls with broken arguments: the 10 MB answer's shape, smaller."""
    capture = tmp_path / "calls.sse"
    write_calls(capture, 120)
    recorded = recorded_of(capture, "anthropic")
    plan = as_recorded(recorded)
    kept = _kept(recorded, plan)
    assert kept.lines is not None and len(kept.lines.places) == len(plan.reads)
    times = _times(len(plan.reads), 1e-6)  # several reads in one microsecond: the same t
    assert _answer(kept, times, True) == _answer(_plain(recorded, plan), times, True)


def test_an_answer_from_kept_lines_hands_its_records_as_slices_made_as_they_are_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Recorded from kept lines, an answer's event records go to a slice observer as ``Slice``s, none made while
    it is written: the thread that reads them makes them (the live diagnosis': records queued on the event loop
    a while were promoted by the cyclic collector and brought on its full collections). Read, they are the
    recorder's records, lines and positions. The near miss: a writer with no slice observer makes each record
    as it writes it, for its observer."""
    recorded = recorded_of(FIXTURES / "anthropic/relay_keepalive_not_json.sse", "anthropic")  # (a payload not JSON)
    plan = as_recorded(recorded)
    kept = _kept(recorded, plan)
    made: list[dict[str, Any]] = []
    records = Lines.records
    monkeypatch.setattr(Lines, "records", lambda self, *args: map(_counted(made), records(self, *args)))
    times = _times(len(plan.reads), 0.0123457)
    handed: list[tuple[dict[str, Any], bytes, Pos] | Slice] = []
    file = io.BytesIO()
    writer = EnvelopeWriter(file, 0.0, lambda *one: handed.append(one), observe_slice=handed.append)
    writer.header("anthropic", "test")
    writer.write(request_record(0.0, "POST", "http://127.0.0.1/v1/messages", b"{}", []))
    recording = Recording(kept.exchange(writer), plan.reads, kept)
    recording.times.extend(times)
    recording.whole = times[-1] + 0.5
    recording.record_now(None, 9.0)
    slices = [piece for piece in handed if isinstance(piece, Slice)]
    assert slices and not made
    read = [one for piece in handed for one in (piece if isinstance(piece, Slice) else [piece])]
    assert len(made) == sum(map(len, slices)) == len(read) - 2  # (the header and the request: not events)
    assert (file.getvalue(), read) == _answer(_plain(recorded, plan), times, True)
    made.clear()
    _answer(kept, times, True)
    assert len(made) == len(read) - 2


def _counted(made: list[dict[str, Any]]) -> Any:
    return lambda record: made.append(record) or record


def test_lines_are_kept_by_the_second_whole_answer_and_never_from_an_answer_cut_short() -> None:
    recorded = recorded_of(FIXTURES / "anthropic/parallel_calls.sse", "anthropic")
    plan = as_recorded(recorded)
    lines = PlanLines(plan, _content_type(recorded), stream_end(recorded.provider))
    every = _times(len(plan.reads), 0.001)
    _answer(lines, every[:5], False, "the application closed the connection after 5 reads")
    _answer(lines, every, True)
    assert lines.lines is None and not lines.making  # one answer whole: nothing kept yet
    _answer(lines, every[:5], False, "the application closed the connection after 5 reads")
    assert lines.lines is None
    _answer(lines, every, True)
    assert lines.lines is not None


def test_kept_lines_are_those_of_the_same_plan() -> None:
    """The server asks for a plan's lines at every answer: the same plan (a seeded variant's, made again) has
    the same; another plan for the same response (a plan function that varies) has lines of its own."""
    recorded = recorded_of(FIXTURES / "anthropic/parallel_calls.sse", "anthropic")
    kept = Kept()
    first = kept.lines(recorded, VARIANTS["random-cuts"].plan(recorded, 0), False)
    assert kept.lines(recorded, VARIANTS["random-cuts"].plan(recorded, 0), False) is first
    assert kept.lines(recorded, VARIANTS["random-cuts"].plan(recorded, 1), False) is not first
    assert kept.lines(recorded, as_recorded(recorded), True) is not first


def test_the_plan_as_recorded_is_made_once_for_a_response() -> None:
    """The server asks for a response's plan at every request, before the answer's first byte: as recorded, it is
    made once (one read per event, no pauses); another response, even an equal one, has its own."""
    recorded = recorded_of(FIXTURES / "anthropic/parallel_calls.sse", "anthropic")
    plan = as_recorded(recorded)
    assert as_recorded(recorded) is plan
    assert plan == Plan(recorded.status, recorded.headers, tuple((0.0, data) for _, data in recorded.events))
    again = recorded_of(FIXTURES / "anthropic/parallel_calls.sse", "anthropic")
    assert again == recorded and as_recorded(again) is not plan and as_recorded(again) == plan


def test_a_server_hands_the_live_diagnosis_an_answer_from_kept_lines_as_slices(
    stream_doctor_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Served, the third answer of a plan (recorded from the lines the second kept) reaches the live queue as
    ``Slice``s, through the conversations' listeners; the near miss: the first two, recorded by the recorder,
    hand their records one by one. Each answer's verdicts are the same."""
    import httpx

    from stream_doctor.record.live import Queued

    handed: list[int] = []
    records = Queued.records
    monkeypatch.setattr(Queued, "records", lambda self, batch: handed.append(len(batch)) or records(self, batch))
    capture = tmp_path / "calls.sse"
    write_calls(capture, 20)
    server = stream_doctor_server(str(capture))
    body = {"model": "claude", "max_tokens": 64, "stream": True, "messages": [{"role": "user", "content": "Go."}]}
    with httpx.Client(timeout=60) as client:
        for number in range(3):
            assert client.post(server.url + "/v1/messages", json=body).status_code == 200
            client.get(server.url + "/v1/messages")  # (answered once the answer's handler has recorded it)
            assert server.watching.drain(60)
            if number < 2:
                assert handed == []
    assert sum(handed) == len(recorded_of(capture, "anthropic").events)
    judged = server.stop()
    assert len(judged) == 3 and len({tuple(one.verdicts) for one in judged}) == 1


@st.composite
def _cut_answers(draw: st.DrawFn) -> tuple[str, Plan, int]:
    body = draw(st.sampled_from(sorted(BODIES)))
    name, plan = draw(st.sampled_from(_plans(recorded_of(FIXTURES / body, BODIES[body]))))
    return body, plan, draw(st.integers(0, len(plan.reads)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cut_answers())
def test_an_answer_left_at_any_read_is_recorded_as_what_it_got(case: tuple[str, Plan, int]) -> None:
    """Lines kept, then the application leaves after ``written`` reads (every read: the answer whole, its
    end failed): the envelope and records are the recorder's of those reads, cut where it stopped."""
    body, plan, written = case
    recorded = recorded_of(FIXTURES / body, BODIES[body])
    kept = _kept(recorded, plan)
    times = _times(written, 0.0031)
    cause = f"the application closed the connection after {written} of {len(plan.reads)} reads"
    got = _answer(kept, times, False, cause)
    assert got == _answer(_plain(recorded, plan), times, False, cause)
    if written < len(plan.reads):  # the near miss: the whole answer's lines are kept, and not recorded
        whole = _answer(kept, _times(len(plan.reads), 0.0031), True)
        assert got[0] != whole[0]
        if body.endswith(".eventstream"):  # (read whole at its end: what came is one record)
            return
        events = [_event(record) for record, _, _ in got[1] if record["sd"] == "event" and "error" not in record]
        # (the last may be what came of a JSON line the reads cut: the end reads it as it is)
        assert (
            events[:-1]
            == [_event(record) for record, _, _ in whole[1] if record["sd"] == "event"][: max(0, len(events) - 1)]
        )


def _event(record: dict[str, Any]) -> object:
    return record.get("data", record.get("raw"))


@pytest.mark.parametrize("body", sorted(BODIES))
def test_the_records_of_kept_lines_fit_the_envelope_format_for_every_variant(body: str) -> None:
    """The live diagnosis reads a ``Slice``'s records unchecked (``envelope.to_frame(checked=True)``): each is
    one the recorder made, which ``check_record`` passes, for every variant's plan and any times."""
    from stream_doctor.capture.envelope import check_record

    recorded = recorded_of(FIXTURES / body, BODIES[body])
    read = 0
    for name, plan in _plans(recorded):
        kept = _kept(recorded, plan)
        assert kept.lines is not None, name
        slices: list[Slice] = []
        writer = EnvelopeWriter(io.BytesIO(), 0.0, observe_slice=slices.append)
        recording = Recording(kept.exchange(writer), plan.reads, kept)
        recording.times.extend(_times(len(plan.reads), 0.0123457))
        recording.whole = 99.0
        recording.record_now(None, 99.0)
        records = [record for piece in slices for record, _, _ in piece]
        assert [check_record(record) for record in records] == [None] * len(records), name
        read += bool(records)
    # (a plan of a status alone or an error before the stream has no event to keep; an AWS event stream is read
    # whole at its end, by the recorder)
    assert read > 5 or body.endswith(".eventstream")


@pytest.mark.parametrize("handed", ["as slices", "one by one"])
def test_the_live_findings_of_an_answer_from_kept_lines_are_the_replays(tmp_path: Path, handed: str) -> None:
    """The third answer of a plan (recorded from the lines the second kept), diagnosed live as ``serve`` does
    (its records handed as ``Slice``s, read unchecked) and a record at a time: its findings are those of the
    replay of its envelope, and of the first answer's."""
    from collections import Counter

    from stream_doctor import replay
    from stream_doctor.record.live import Live
    from stream_doctor.values.options import Options

    capture = tmp_path / "calls.sse"
    write_calls(capture, 60)  # every 10th call's arguments broken
    recorded = recorded_of(capture, "anthropic")
    plan = VARIANTS["random-cuts"].plan(recorded, 3)
    lines = PlanLines(plan, _content_type(recorded), stream_end(recorded.provider))
    found = []
    for number in range(3):
        live = Live(Options())
        envelope = tmp_path / f"answer{number}.jsonl"
        conversation = live.listener(str(envelope), "anthropic")
        slices = conversation.records if handed == "as slices" else None
        writer = EnvelopeWriter(envelope.open("wb"), 0.0, conversation.record, observe_slice=slices)
        writer.header("anthropic", "test")
        writer.write(request_record(0.0, "POST", "http://127.0.0.1/v1/messages", b"{}", []))
        recording = Recording(lines.exchange(writer), plan.reads, lines)
        recording.times.extend(_times(len(plan.reads), 0.001 * (number + 1)))
        recording.whole = 5.0
        recording.record_now(None, 5.0)
        writer.close()
        conversation.exchange_ended()
        conversation.close()
        assert (recording.lines is not None) == (number == 2)
        key = lambda f: (f.code, f.call_id, str(f.location.line))  # noqa: E731
        assert Counter(map(key, conversation.findings)) == Counter(map(key, replay(str(envelope)).findings))
        found.append(Counter(map(key, conversation.findings)))
    assert found[0] == found[2]
    assert sum(1 for code, _, _ in found[2] if code == "SD201") == 6
