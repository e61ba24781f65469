"""The timeline (``--timeline``, the HTML report) and ``--client`` without keeping every event:
compact rows made as the events are read, capped with a stated summary, and client profiles fed
live; what they show is what keeping every event showed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stream_doctor.clients import resolve, review_stream
from stream_doctor.engine.pipeline import replay
from stream_doctor.reporters import RenderOptions, _html_timeline, html, terminal
from stream_doctor.values import timeline_rows as timeline_module
from stream_doctor.values.options import Options
from tests.test_adversarial import run_cli
from tests.test_golden import CAPTURES
from tests.test_streaming_memory import _sse


@pytest.mark.parametrize("name", CAPTURES)
def test_the_compact_timeline_is_the_one_every_event_gives(name: str) -> None:
    compact = replay(f"fixtures/{name}", Options(timeline=True))
    whole = replay(f"fixtures/{name}", Options(keep_events=True))
    assert compact.events == ()  # nothing per event is kept
    assert compact.timeline == timeline_module.of_events(whole.events) == whole.timeline
    assert sum(row.count for row in compact.timeline.rows) == len(whole.events)
    options = RenderOptions(width=160, timeline=True, max_rows=0)
    assert terminal.render(compact, options) == terminal.render(whole, options)


def test_client_profiles_fed_live_agree_with_a_run_over_every_kept_event() -> None:
    name = "fixtures/anthropic/parallel_calls.sse"
    live = replay(name, Options(clients=("all",), client_mode="model"))  # the profiles, as review_stream runs them
    whole = replay(name, Options(keep_events=True))
    reviews = review_stream(whole.stream, (event for _, event in whole.events), resolve(["all"]))
    assert reviews and live.events == ()
    live_reviews = {n: extra.data for n, extras in live.extras.items() for extra in extras if extra.key == "clients"}
    for review in reviews:
        for verdict in review.verdicts:
            data = live_reviews[verdict.call + 1][review.profile.name]
            assert data["agrees"] == verdict.agrees
            assert data["differences"] == [d.kind for d in verdict.differences]
            assert [h["event"] for h in data["handoffs"]] == [h.at.number if h.at else None for h in verdict.handoffs]


def test_rows_beyond_the_cap_are_counted_and_said(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(timeline_module, "MAX_ROWS", 5)
    capture = tmp_path / "pings.sse"
    capture.write_bytes(_sse(40))  # a text run and a ping, 20 times: 40 rows and more
    full = replay(str(capture), Options(keep_events=True))
    report = replay(str(capture), Options(timeline=True))
    assert len(report.timeline.rows) == 5
    assert report.timeline.rows == full.timeline.rows[:5] if len(full.timeline.rows) == 5 else True
    assert report.timeline.total == timeline_module.of_events(full.events).total > 40
    text = terminal.render(report, RenderOptions(width=120, timeline=True, max_rows=0))
    assert f"… {report.timeline.hidden:,} more timeline rows not kept (a replay keeps the first 5)" in text
    page = html.render(report, RenderOptions())
    assert f"… {report.timeline.hidden} more timeline rows not drawn (a replay keeps the first 5)" in page


def test_a_long_turn_draws_at_most_event_marks_each_saying_what_it_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_html_timeline, "EVENT_MARKS", 3)
    report = replay("fixtures/anthropic/parallel_calls.sse", Options(timeline=True))
    rows = len(report.timeline.rows)
    assert rows > 6
    page = html.render(report, RenderOptions())
    lane = page[page.index('<div class="lane events-lane">') :]
    lane = lane[: lane.index("</div>\n  </div>")]
    assert lane.count('<span class="mark') == 3
    events = sum(row.count for row in report.timeline.rows)
    assert f"events 1-{report.timeline.rows[-1].last}" not in lane  # groups, not one mark for all
    assert sum(int(t.split(": ")[1].split(" events")[0]) for t in lane.split('title="events ')[1:]) == events


@pytest.mark.slow  # the CLI three times on 100,000 frames, in child processes under an address-space limit (5 s of CPU)
def test_timeline_and_html_peak_by_rows_not_by_kept_events(tmp_path: Path) -> None:
    # 100,000 frames (8.5 MB): keeping each frame and event cost +75 MB over the plain replay; the
    # rows (50,000 here: the pings do not fold) cost a few hundred bytes each.
    capture = tmp_path / "long.sse"
    capture.write_bytes(_sse(100_000))
    plain = run_cli("replay", str(capture), "--format", "json")
    assert plain.code == 0 and json.loads(plain.out)["capture"]["events"] > 100_000
    timeline = run_cli("replay", str(capture), "--timeline", "--max-rows", "5")
    assert timeline.code == 0 and "more timeline rows not shown" in timeline.out
    page = run_cli("replay", str(capture), "--format", "html", "-o", str(tmp_path / "report.html"))
    assert page.code == 0 and (tmp_path / "report.html").stat().st_size < 2 << 20  # the events lane is grouped
    assert timeline.peak_kb - plain.peak_kb < 30 << 10, (plain.peak_kb, timeline.peak_kb)
    assert page.peak_kb - plain.peak_kb < 30 << 10, (plain.peak_kb, page.peak_kb)


@pytest.mark.slow  # the CLI three times under an address-space limit, once with --client all (3.3 s of CPU)
def test_a_capture_read_in_runs_gives_every_event_to_the_timeline_and_the_clients(tmp_path: Path) -> None:
    # runs of fragment events are read whole on the hot path (capture/runs.py); a timeline and the
    # client profiles see each event, so they read the capture event by event (before: a crash)
    from benchmarks.captures import write_calls

    capture = tmp_path / "calls.sse"
    write_calls(capture, 300)
    plain = replay(str(capture), Options())
    whole = replay(str(capture), Options(keep_events=True))
    compact = replay(str(capture), Options(timeline=True))
    assert compact.timeline == whole.timeline and compact.timeline.total > 900
    assert compact.codes == plain.codes == whole.codes
    for args in (("--timeline", "--max-rows", "3"), ("--format", "html", "-o", str(tmp_path / "r.html"))):
        ran = run_cli("replay", str(capture), *args)
        assert ran.code == 1 and not ran.err, ran.err
    with_clients = run_cli("replay", str(capture), "--client", "all", "--format", "json")
    assert with_clients.code == 1 and json.loads(with_clients.out)["calls"][0]["extras"]["clients"]
