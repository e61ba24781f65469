"""The live diagnosis in a process of its own (``record.apart.Apart``): what it finds, what it tells the grouping
and what it says are those of the live thread's own diagnosis, and a diagnosis process that dies is said."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.captures import write_calls
from stream_doctor import replay
from stream_doctor.engine.redaction import redacted
from stream_doctor.record.apart import Apart
from stream_doctor.record.exchange import RecordedExchange, stream_end
from stream_doctor.record.live import Live, Queued
from stream_doctor.record.writer import EnvelopeWriter, request_record
from stream_doctor.serve.judge import Watching, _ran_unfinished, _verdicts, about_the_application
from stream_doctor.values.options import Options


def _events(capture: Path) -> list[bytes]:
    return [event + b"\n\n" for event in capture.read_bytes().split(b"\n\n") if event]


def _served(envelope: Path, handle: Queued, events: list[bytes], follow_up: bytes | None = None) -> None:
    """``events`` recorded as one answer, a slice of 100 reads at a time (as ``serve`` does), then ``follow_up``."""
    writer = EnvelopeWriter(envelope.open("wb"), start=0.0, observe=handle.record)
    writer.header("anthropic", "test")
    writer.write(request_record(0.0, "POST", "https://api.anthropic.com/v1/messages", b"{}", []))
    exchange = RecordedExchange(writer, "text/event-stream", None, stream_end("anthropic"))
    for first in range(0, len(events), 100):
        with handle.held(), writer.held():
            exchange.chunks(events[first : first + 100], [n / 1000 for n in range(first, first + 100)][: len(events)])
    exchange.end(None, 1.0)
    handle.exchange_ended()
    if follow_up is not None:
        writer.write(request_record(2.0, "POST", "https://api.anthropic.com/v1/messages", follow_up, []))
    writer.close()
    handle.close()


def _key(finding: Any) -> tuple[str, str | None, str]:
    return finding.code, finding.call_id, str(finding.location)


def test_findings_apart_are_the_live_threads_and_replays(tmp_path: Path) -> None:
    capture = tmp_path / "calls.sse"
    write_calls(capture, 60)  # every 10th call's arguments broken: SD201 six times
    events = _events(capture)
    found = {}
    for kind in ("thread", "apart"):
        said: list[str] = []
        live = Live(Options(), said.append) if kind == "thread" else Apart(Live, Options(), said.append)
        handle = live.queued(str(tmp_path / f"{kind}.jsonl"), "anthropic")
        _served(tmp_path / f"{kind}.jsonl", handle, events)
        assert live.drain(60)
        assert handle.done == handle.sent and not handle.broken
        found[kind] = (Counter(map(_key, handle.conversation.findings)), live.worst, len(said))
    replayed = replay(str(tmp_path / "apart.jsonl")).findings
    assert [f.code for f in replayed].count("SD201") == 6
    # the same findings (the paths aside: one file each), the same worst, the same lines said
    renamed = Counter(
        {(c, i, loc.replace("thread.jsonl", "apart.jsonl")): n for (c, i, loc), n in found["thread"][0].items()}
    )
    assert found["apart"][0] == renamed == Counter(map(_key, replayed))
    assert found["apart"][1:] == found["thread"][1:]


def test_the_grouping_is_told_the_calls_the_child_read(tmp_path: Path) -> None:
    capture = tmp_path / "calls.sse"
    write_calls(capture, 3)
    live = Apart(Live, Options())
    handle = live.queued(str(tmp_path / "calls.jsonl"), "anthropic")
    assert handle.assistant_turn() == (frozenset(), frozenset())  # near miss: nothing read yet
    _served(tmp_path / "calls.jsonl", handle, _events(capture))
    assert live.drain(60)
    calls, messages = handle.assistant_turn()
    assert calls == {"toolu_00000000", "toolu_00000001", "toolu_00000002"} and messages == {"msg_scale"}


def test_what_the_child_holds_for_the_verdicts_is_what_the_replay_gives_them(tmp_path: Path) -> None:
    """``serve``'s ``Watching`` in the child: the application's findings, masked and in the report's order, and
    the calls run unfinished, are what the judge's replay of the envelope gives (so the stop replays nothing)."""
    capture = tmp_path / "calls.sse"
    write_calls(capture, 10)
    envelope = tmp_path / "calls.jsonl"
    live = Apart(Watching, Options())
    handle = live.queued(str(envelope), "anthropic")
    # the follow-up echoes call 0 with another input, carrying a secret, and answers no other call
    follow_up = (
        b'{"model":"claude","messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":'
        b'"tool_use","id":"toolu_00000000","name":"write_file","input":{"api_key":"sk-live-0123456789abcdef"}}]},'
        b'{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_00000000","content":"ok"}]}]}'
    )
    _served(envelope, handle, _events(capture), follow_up)
    assert live.drain(60)
    held = live.held[str(envelope)]
    report = redacted(replay(str(envelope)))
    assert held.findings == _verdicts(f for f in report.findings if about_the_application(f))
    assert {f.code for f in held.findings} >= {"SD602"}
    assert not any("sk-live-0123456789abcdef" in f.message for f in held.findings)
    assert held.unfinished == tuple(_ran_unfinished(report.turns))


def test_a_conversation_the_child_did_not_read_whole_is_not_held(tmp_path: Path) -> None:
    capture = tmp_path / "calls.sse"
    write_calls(capture, 3)
    said: list[str] = []
    live = Apart(Watching, Options(), None, said.append, queue_bytes=4 * 1024)  # the queue fills: records skipped
    handle = live.queued(str(tmp_path / "calls.jsonl"), "anthropic")
    _served(tmp_path / "calls.jsonl", handle, _events(capture))
    assert live.drain(60)
    assert handle.skipped and live.held == {}  # the judge replays it
    assert "the diagnosis fell" in said[0]


def test_a_diagnosis_process_that_dies_is_said_and_nothing_waits_on_it(tmp_path: Path) -> None:
    capture = tmp_path / "calls.sse"
    write_calls(capture, 3)
    said: list[str] = []
    live = Apart(Live, Options(), None, said.append)
    first = live.queued(str(tmp_path / "first.jsonl"), "anthropic")
    _served(tmp_path / "first.jsonl", first, _events(capture))
    assert live.drain(60) and not first.broken and said == []  # near miss: a child that answers
    live = Apart(Live, Options(), None, said.append)
    handle = live.queued(str(tmp_path / "calls.jsonl"), "anthropic")  # (the child starts with the first)
    assert live._child is not None
    live._child.kill()
    live._child.wait()
    _served(tmp_path / "calls.jsonl", handle, _events(capture))
    assert live.drain(60)  # every item counted done: the grouping and the stop never wait on a dead child
    assert handle.broken and live.broken == 1 and live.failed
    assert len(said) == 1 and "the diagnosis process ended" in said[0] and "replay it afterwards" in said[0]
