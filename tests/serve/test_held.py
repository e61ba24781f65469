"""What the live diagnosis holds of a conversation once it is closed (``serve.judge.Held``) is what the judge's
replay of its envelope gives the verdicts, so the server's stop replays nothing; a conversation it did not read
whole holds nothing (the judge replays it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.captures import write_calls
from stream_doctor import replay
from stream_doctor.engine.redaction import redacted
from stream_doctor.record.exchange import RecordedExchange, stream_end
from stream_doctor.record.live import Queued
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


def test_what_the_live_diagnosis_holds_for_the_verdicts_is_what_the_replay_gives_them(tmp_path: Path) -> None:
    """``serve``'s ``Watching``: the application's findings, masked and in the report's order, and the calls run
    unfinished, are what the judge's replay of the envelope gives (so the stop replays nothing)."""
    capture = tmp_path / "calls.sse"
    write_calls(capture, 10)
    envelope = tmp_path / "calls.jsonl"
    live = Watching(Options())
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


def test_a_conversation_the_diagnosis_did_not_read_whole_is_not_held(tmp_path: Path) -> None:
    capture = tmp_path / "calls.sse"
    write_calls(capture, 3)
    said: list[str] = []
    live = Watching(Options(), None, said.append, queue_bytes=4 * 1024)  # the queue fills: records skipped
    handle = live.queued(str(tmp_path / "calls.jsonl"), "anthropic")
    _served(tmp_path / "calls.jsonl", handle, _events(capture))
    assert live.drain(60)
    assert handle.skipped and live.held == {}  # the judge replays it
    assert "the diagnosis fell" in said[0]


def test_the_stop_judges_what_the_diagnosis_held_without_replaying(
    stream_doctor_server: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    """Two answers read whole: the stop's verdicts come from what the live diagnosis held, not from a replay of
    each envelope (a replay here would raise); the near miss, held emptied, replays and fails."""
    import httpx

    from stream_doctor import api
    from stream_doctor.serve import judge as judging

    capture = tmp_path / "calls.sse"
    write_calls(capture, 20)
    server = stream_doctor_server(str(capture))
    first = {"model": "claude", "max_tokens": 64, "stream": True, "messages": [{"role": "user", "content": "Go."}]}
    for _ in range(2):
        assert httpx.post(server.url + "/v1/messages", json=first, timeout=60).status_code == 200

    def no_replay(*_: Any, **__: Any) -> Any:
        raise AssertionError("the stop replayed an envelope the live diagnosis held")

    monkeypatch.setattr(api, "replay", no_replay)
    judged = server.stop()
    assert len(judged) == 2 and len(server.watching.held) == 2
    assert all([v.severity.label for v in one.verdicts] == ["info"] for one in judged)  # a bare stream's request
    try:  # near miss: nothing held, so the judge replays
        judging.judge([one.served for one in judged], {})
    except AssertionError as error:
        assert "replayed" in str(error)
    else:
        raise AssertionError("the judge did not replay a conversation nothing held")
