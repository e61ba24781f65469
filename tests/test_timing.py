"""Call timings from a capture's times, and SD306 (a call left pending long after its turn ended)."""

from __future__ import annotations

import json
from pathlib import Path

from stream_doctor import replay

PENDING = Path("fixtures/anthropic/pending_after_message_stop.jsonl")


def test_a_call_waited_on_for_a_minute_after_the_stream_abandoned_it() -> None:
    report = replay(str(PENDING))
    assert report.codes == ("SD301", "SD306")
    [timing] = [extra for extra in report.extras[1] if extra.key == "timing"]
    assert timing.data["completed"] is None and timing.data["turn_ended"] == 1.434
    assert timing.data["pending_after_turn"] == 59.968 and timing.data["waited_for"] == "the next request"
    assert "then 59.968 s more until the next request (t 61.402)" in timing.lines[0]


def test_near_miss_the_client_retried_within_seconds(tmp_path: Path) -> None:
    records = [json.loads(line) for line in PENDING.read_text().splitlines()]
    second = next(i for i, r in enumerate(records) if r["sd"] == "request" and r["t"] > 60)
    records[second]["t"] = 3.2
    for record in records[second + 1 :]:
        record["t"] -= 58.2
    quick = tmp_path / "quick.jsonl"
    quick.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert replay(str(quick)).codes == ("SD301",)


def test_complete_calls_show_how_long_they_were_pending_and_when_they_ran() -> None:
    report = replay("fixtures/anthropic/empty_input_bug.jsonl")
    [timing] = report.extras[1]
    assert timing.data["pending"] == 0.199 and timing.data["executed"] == 1.44
    assert timing.lines == ("timing   pending 0.199 s (t 1.178 → 1.377), ran 0.063 s after completing",)
    premature = replay("fixtures/anthropic/premature_execution_partial_buffer.jsonl")
    assert "before completing" in premature.extras[1][0].lines[0]


def test_no_times_no_timing() -> None:
    report = replay("fixtures/anthropic/one_call.sse")
    assert report.extras == {} and report.stream.capture.clock is None
    assert "extras" not in report.to_dict()["calls"][0]
