"""The live diagnosis reads event records in batches and ``serve`` writes an answer's records a slice at a
time: neither may change what is found, what the grouping is told, or the envelope written."""

from __future__ import annotations

import io
import math
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.captures import write_calls
from stream_doctor import replay
from stream_doctor.capture.base import Pos
from stream_doctor.record.exchange import RecordedExchange, stream_end
from stream_doctor.record.live import _BATCH, Live, _cost
from stream_doctor.record.writer import EnvelopeWriter, Slice, request_record
from stream_doctor.values.options import Options


def _events(capture: Path) -> list[bytes]:
    return [event + b"\n\n" for event in capture.read_bytes().split(b"\n\n") if event]


def _record(path: Path, events: list[bytes], observe: Any, held: int = 0) -> EnvelopeWriter:
    """``events`` recorded into an envelope at ``path``, one read each; with ``held``, that many reads a slice."""
    writer = EnvelopeWriter(path.open("wb"), start=0.0, observe=observe)
    writer.header("anthropic", "test")
    writer.write(request_record(0.0, "POST", "https://api.anthropic.com/v1/messages", b"{}", []))
    exchange = RecordedExchange(writer, "text/event-stream", None, stream_end("anthropic"))
    for first in range(0, len(events), held or 1):
        if held:
            with writer.held():
                for number in range(first, min(len(events), first + held)):
                    exchange.chunk(events[number], number / 1000)
        else:
            exchange.chunk(events[first], first / 1000)
    exchange.end(None, 1.0)
    return writer


def test_live_findings_over_many_batches_are_replays(tmp_path: Path) -> None:
    capture = tmp_path / "calls.sse"
    write_calls(capture, 60)  # 602 events: calls cut across batch ends, every 10th call's arguments broken
    events = _events(capture)
    assert len(events) > 2 * _BATCH
    live = Live(Options())
    envelope = tmp_path / "calls.jsonl"
    conversation = live.listener(str(envelope), "anthropic")
    _record(envelope, events, conversation.record).close()
    conversation.exchange_ended()
    conversation.close()
    expected = replay(str(envelope)).findings
    assert [f.code for f in expected].count("SD201") == 6
    key = lambda f: (f.code, f.call_id, str(f.location))  # noqa: E731
    assert Counter(map(key, conversation.findings)) == Counter(map(key, expected))


def test_the_grouping_knows_a_call_as_soon_as_its_record_is_read_not_when_a_batch_fills(tmp_path: Path) -> None:
    capture = tmp_path / "calls.sse"
    write_calls(capture, 2)
    events = _events(capture)
    conversation = Live(Options()).listener("calls.jsonl", "anthropic")
    writer = _record(tmp_path / "calls.jsonl", events[:1], conversation.record)
    assert conversation.assistant_turn()[0] == frozenset()  # near miss: only message_start so far
    exchange = RecordedExchange(writer, "text/event-stream", None, stream_end("anthropic"))
    exchange.chunk(events[1])  # content_block_start of the first call: one record, far from a batch's end
    assert conversation.assistant_turn() == (frozenset({"toolu_00000000"}), frozenset({"msg_scale"}))
    writer.close()


def test_records_held_for_a_slice_are_the_same_file_and_positions_as_written_one_by_one(tmp_path: Path) -> None:
    capture = tmp_path / "calls.sse"
    write_calls(capture, 5)
    events = _events(capture)
    seen: dict[int, list[Pos]] = {0: [], 7: []}
    for held in seen:
        _record(tmp_path / f"{held}.jsonl", events, lambda record, line, pos, held=held: seen[held].append(pos)).close()
    assert (tmp_path / "7.jsonl").read_bytes() == (tmp_path / "0.jsonl").read_bytes()
    assert seen[7] == seen[0]


def test_a_writer_closed_inside_held_keeps_what_was_written() -> None:
    class Kept(io.BytesIO):
        def close(self) -> None:
            self.kept = self.getvalue()

    file = Kept()
    writer = EnvelopeWriter(file, start=0.0)
    with writer.held():
        writer.write({"sd": "event", "t": 0.0, "data": {}})
        assert file.getvalue() == b""  # held: nothing written yet
        writer.close()
    assert file.kept == b'{"sd":"event","t":0.0,"data":{}}\n'


def test_records_handed_while_held_are_one_item_of_the_queue_and_diagnosed_as_replay_does(tmp_path: Path) -> None:
    capture = tmp_path / "calls.sse"
    write_calls(capture, 30)
    events = _events(capture)
    live = Live(Options())
    envelope = tmp_path / "calls.jsonl"
    handle = live.queued(str(envelope), "anthropic")
    queued: list[int] = []
    put = live._put

    def counted(owner: Any, kind: str, item: Any, cost: int) -> bool:
        queued.append(len(item) if kind == "record" else 0)
        return put(owner, kind, item, cost)

    live._put = counted  # type: ignore[method-assign]
    writer = EnvelopeWriter(envelope.open("wb"), start=0.0, observe=handle.record)
    writer.header("anthropic", "test")
    exchange = RecordedExchange(writer, "text/event-stream", None, stream_end("anthropic"))
    with handle.held():
        for number, event in enumerate(events):
            exchange.chunk(event, number / 1000)
    writer.write(request_record(1.0, "POST", "https://api.anthropic.com/v1/messages", b"{}", []))  # near miss: not held
    exchange.end(None, 1.0)
    writer.close()
    handle.exchange_ended()
    handle.close()
    assert live.drain(30)
    # the header, the held events as one item, the request alone, then the exchange's end and the close
    assert queued == [1, len(events), 1, 0, 0] and handle.done == handle.sent == len(events) + 4
    key = lambda f: (f.code, f.call_id, str(f.location))  # noqa: E731
    assert Counter(map(key, handle.conversation.findings)) == Counter(map(key, replay(str(envelope)).findings))


def test_a_slice_of_records_is_one_item_of_the_queue_in_the_order_handed_and_counted_as_its_records() -> None:
    """A ``Slice`` (records the writer wrote at once, made as read) handed while held goes on the queue after the
    records handed before it and before those after; handed outside ``held``, at once. The queue's bound counts it
    as the records it makes."""
    live = Live(Options())
    handle = live.queued("conversation.jsonl", "anthropic")
    queued: list[tuple[str, Any, int]] = []
    live._put = lambda owner, kind, item, cost: queued.append((kind, item, cost)) or True  # type: ignore[method-assign]
    lines = [b'{"sd":"event","t":0.5,"data":{"n":%d}}' % n for n in range(3)]
    piece = Slice(lambda: ({"sd": "event", "t": 0.5, "data": {"n": n}} for n in range(3)), lines, (1, 2, 40))
    before = ({"sd": "request", "t": 0.0, "body": {}}, b'{"sd":"request","t":0.0,"body":{}}', Pos(1, 2, 5))
    after = ({"sd": "event", "t": 1.0, "raw": ""}, b'{"sd":"event","t":1.0,"raw":""}', Pos(5, 6, 150))
    with handle.held():
        handle.record(*before)
        handle.records(piece)
        handle.record(*after)
        assert queued == []
    assert [item for _, item, _ in queued] == [[before], piece, [after]]
    assert list(piece) == [
        ({"sd": "event", "t": 0.5, "data": {"n": n}}, lines[n], Pos(2 + n, 3 + n, 40 + n * (len(lines[0]) + 1)))
        for n in range(3)
    ]
    assert queued[1][2] == _cost(list(piece))
    handle.records(piece)  # the near miss: not held, queued at once
    assert queued[-1] == ("record", piece, _cost(list(piece))) and handle.sent == 8


def test_a_slices_records_are_read_unchecked_and_a_record_handed_alone_is_checked() -> None:
    """A ``Slice`` holds records the recorder made (they fit the format: tests/serve/test_lines.py), so the live
    diagnosis makes their frames without checking them again; the near miss: the same record handed alone is
    checked, and one that does not fit becomes the frame the replay reports (SD001), as ever."""
    wrong = {"sd": "event", "t": -1.0, "data": {"type": "ping"}}  # (a time before the envelope began)
    line = b'{"sd":"event","t":-1.0,"data":{"type":"ping"}}'
    read: dict[str, list[Any]] = {}
    for handed in ("slice", "alone"):
        conversation = Live(Options()).listener("conversation.jsonl", "anthropic")
        conversation.records(
            [({"sd": "event", "t": 0.0, "event": "ping", "data": {"type": "ping"}}, b"{}", Pos(1, 2, 9))]
        )
        assert conversation.current is not None  # (the turn begun: the next events are read in the loop)
        if handed == "slice":
            conversation.records(Slice(lambda: [dict(wrong)], [line], (1, 2, 12)))
        else:
            conversation.records([(dict(wrong), line, Pos(2, 3, 12))])
        read[handed] = [(frame.kind, frame.error) for frame in conversation.current.batch]
    assert read == {
        "slice": [("event", None)],
        "alone": [("event", 'envelope: event record: "t" must be a number of seconds >= 0')],
    }


def test_a_held_batch_that_does_not_fit_whole_is_queued_a_record_at_a_time_as_far_as_they_fit() -> None:
    said: list[str] = []
    live = Live(Options(), None, said.append, queue_bytes=4 * 1024)
    handle = live.queued("p.jsonl", "anthropic")
    live._thread = object()  # type: ignore[assignment]  # no live thread: the queue only fills
    with handle.held():
        for _ in range(5):  # 1,512 bytes each as estimated: two fit
            handle.record({"sd": "header", "v": 1}, b"x" * 500, Pos(0, 1, 0))
    assert (handle.sent, handle.skipped, len(live._queue)) == (2, 3, 2)
    assert len(said) == 1 and "no more live findings for p.jsonl" in said[0]


_PIECES = st.sampled_from(
    [b'event: a\ndata: {"x":1}\n\n', b"data: [DONE]\n\n", b"data: not json\n\n", b": ping\n\n", b'{"y":"\xc3\xa9"}\n']
    + [b"data: " + b"z" * 40 + b"\n\n", b"event: e\r\ndata: {}\r\n\r\n", b"\n", b"data: \x01\n\n"]
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_PIECES, max_size=25),
    st.lists(st.integers(0, 600), max_size=12),
    st.sampled_from(["text/event-stream", "application/x-ndjson"]),
    st.sampled_from([(1000, 10_000), (30, 10_000), (1000, 200)]),
)
def test_a_slice_of_reads_read_at_once_is_the_envelope_of_one_read_at_a_time(
    pieces: list[bytes], cuts: list[int], kind: str, limits: tuple[int, int]
) -> None:
    """``RecordedExchange.chunks`` (``serve``: a slice read as one piece, each event at the time of the read
    that completed it) writes what ``chunk`` per read writes; near misses, read a read at a time: a CR, an
    event over ``max_event``, a capture reaching ``max_capture``."""
    body = b"".join(pieces)
    ends = sorted({c for c in cuts if 0 < c < len(body)} | {len(body)})
    reads = [body[a:b] for a, b in zip([0, *ends], ends, strict=False)]
    times = [number / 8 for number in range(len(reads))]
    written = []
    for at_once in (False, True):
        file = io.BytesIO()
        file.close = lambda: None  # type: ignore[method-assign]  # (kept to be read)
        writer = EnvelopeWriter(file, start=0.0)
        exchange = RecordedExchange(writer, kind, None, stream_end(None), *limits)
        if at_once:
            for first in range(0, len(reads), 3):  # slices of three reads, as serve's of 256
                exchange.chunks(reads[first : first + 3], times[first : first + 3])
        else:
            for data, t in zip(reads, times, strict=True):
                exchange.chunk(data, t)
        exchange.end(None, 9.0)
        written.append((file.getvalue(), exchange.size, exchange.events, exchange.cut))
    assert written[1] == written[0]


def _two_exchanges(tmp_path: Path) -> tuple[Path, list[tuple[dict[str, Any], bytes, Pos]]]:
    """An envelope of two exchanges (the second cut inside an event) and every record written, as handed on."""
    capture = tmp_path / "calls.sse"
    write_calls(capture, 12)  # every 10th call's arguments broken
    events = _events(capture)
    records: list[tuple[dict[str, Any], bytes, Pos]] = []
    envelope = tmp_path / "calls.jsonl"
    writer = EnvelopeWriter(envelope.open("wb"), start=0.0, observe=lambda *record: records.append(record))
    writer.header("anthropic", "test")
    for number, (last, cause) in enumerate([(len(events), None), (len(events) // 2, "the client closed")]):
        writer.write(request_record(number, "POST", "https://api.anthropic.com/v1/messages", b"{}", []))
        exchange = RecordedExchange(writer, "text/event-stream", None, stream_end("anthropic"))
        for event in events[:last]:
            exchange.chunk(event, number + 0.5)
        exchange.chunk(events[last][:20] if cause else b"", number + 0.6)
        exchange.end(cause, number + 0.7)
    writer.close()
    return envelope, records


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 400), max_size=8))
def test_records_read_a_slice_at_a_time_are_diagnosed_as_replay_does_wherever_the_slices_end(cuts: list[int]) -> None:
    """``LiveConversation.records`` takes a slice's events in one loop and hands any other record (the header, a
    request that begins a turn, a cut) to ``_read``: wherever the slices end, the findings are the replay's.
    The near miss: a record at a time (``record``, one each) finds the same."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        envelope, records = _two_exchanges(Path(folder))
        expected = replay(str(envelope)).findings
    assert {"SD201", "SD003"} <= {f.code for f in expected}
    ends = sorted({c for c in cuts if 0 < c < len(records)} | {len(records)})
    # (by line: the live turn 1 names no interaction, as no turn 2 is known when it is judged)
    key = lambda f: (f.code, f.call_id, f.location.line)  # noqa: E731
    for sliced in (True, False):
        conversation = Live(Options()).listener(str(envelope), "anthropic")
        if sliced:
            for first, end in zip([0, *ends], ends, strict=False):
                conversation.records(records[first:end])
        else:
            for record in records:
                conversation.record(*record)
        conversation.exchange_ended()
        conversation.close()
        assert len(conversation.turns) == 2
        assert Counter(map(key, conversation.findings)) == Counter(map(key, expected))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.one_of(st.floats(0, 100), st.just(math.nan)), min_size=1, max_size=60))
def test_a_turns_clock_is_the_replays_with_frames_without_a_time_anywhere(times: list[float]) -> None:
    """The live turn's clock (``clocked``, from the time kept per frame, NaN where a frame has none) is what
    the replay's ``clock`` makes of the same frames (``engine.additions.timed``: a frame without a time has
    ``t`` None); the near miss: every frame timed."""
    from array import array
    from types import SimpleNamespace

    from stream_doctor.accumulate.pending import clock
    from stream_doctor.capture.base import Frame
    from stream_doctor.record.live_turn import clocked

    def replayed(values: list[float]) -> Any:
        frames = [Frame(Pos(1 + n, 1, 0), b"", None, t=None if math.isnan(t) else t) for n, t in enumerate(values)]
        return clock(stream, ((frame.pos.number, frame.t) for frame in frames), None)

    stream = _a_stream()
    turn = SimpleNamespace(first=Pos(1, 1, 0), times=array("d", times))
    assert clocked(stream, turn).capture.clock == replayed(times)  # type: ignore[arg-type]
    every = [0.0 if math.isnan(t) else t for t in times]
    assert clocked(stream, SimpleNamespace(first=turn.first, times=array("d", every))).capture.clock == replayed(  # type: ignore[arg-type]
        every
    )


def _a_stream() -> Any:
    """A stream of a few calls, whose positions the clock keeps the times of."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        capture = Path(folder) / "calls.sse"
        write_calls(capture, 3)
        return replay(str(capture)).turns[0].stream
