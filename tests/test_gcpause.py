"""Pausing the collector during a replay: objects an application froze stay frozen, and asking costs once."""

from __future__ import annotations

import gc

import pytest

from stream_doctor.util import gcpause


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    calls = {"get_freeze_count": 0, "freeze": 0, "unfreeze": 0}
    frozen = {"count": 0}

    def get_freeze_count() -> int:
        calls["get_freeze_count"] += 1
        return frozen["count"]

    def counted(name: str):  # type: ignore[no-untyped-def]
        return lambda: calls.__setitem__(name, calls[name] + 1)

    monkeypatch.setattr(gcpause, "_application_froze", False)
    monkeypatch.setattr(gc, "get_freeze_count", get_freeze_count)
    monkeypatch.setattr(gc, "freeze", counted("freeze"))
    monkeypatch.setattr(gc, "unfreeze", counted("unfreeze"))

    def application_freezes() -> None:
        frozen["count"] = 1_000_000

    monkeypatch.setattr(gcpause, "_test_application_freezes", application_freezes, raising=False)
    return calls


def test_new_objects_go_to_the_oldest_generation_when_nothing_is_frozen(recorded: dict[str, int]) -> None:
    for _ in range(3):
        with gcpause.no_gc():
            assert not gc.isenabled()
        assert gc.isenabled()
    assert recorded["freeze"] == recorded["unfreeze"] == 3


def test_what_the_application_froze_is_never_thawed_and_counted_once(recorded: dict[str, int]) -> None:
    with gcpause.no_gc():
        pass
    gcpause._test_application_freezes()  # type: ignore[attr-defined]  # the application calls gc.freeze()
    before = recorded["get_freeze_count"]
    for _ in range(5):
        with gcpause.no_gc():
            pass
    assert recorded["unfreeze"] == 1  # only the first replay, before the application froze anything
    assert recorded["get_freeze_count"] - before == 1  # the permanent generation is walked once, not per replay


def test_a_real_freeze_survives_a_replay() -> None:
    import subprocess
    import sys

    code = (
        "import gc; keep = [[i] for i in range(10000)]; gc.freeze(); n = gc.get_freeze_count()\n"
        "from stream_doctor import replay\n"
        "for _ in range(3): replay('fixtures/anthropic/one_call.sse')\n"
        "assert gc.get_freeze_count() >= 10000, (gc.get_freeze_count(), n)\n"  # thawed, it would be 0
    )
    from tests.conftest import ROOT

    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_cycles_left_by_many_replays_are_collected(monkeypatch: pytest.MonkeyPatch) -> None:
    """Objects moved to the oldest generation skip the collector's own trigger: a process that replays
    capture after capture must still get its leftover reference cycles back."""
    import weakref

    class Node:
        other: object

    monkeypatch.setattr(gcpause, "COLLECT_AFTER", 5_000)
    monkeypatch.setattr(gcpause, "_allocated", 0)
    monkeypatch.setattr(gcpause, "_heap", 0)
    gc.collect()
    with gcpause.no_gc():
        first, second = Node(), Node()
        first.other, second.other = second, first  # a cycle, as an exception and its frames make
        gone = weakref.ref(first)
        del first, second
    assert gone() is not None  # unreachable, but moved past the young generations
    kept = []
    for _ in range(3):
        with gcpause.no_gc():
            kept.append([[i] for i in range(2_000)])  # later replays build and keep more
    assert gone() is not None  # owed now: the next pause begins with the collection
    with gcpause.no_gc():
        assert gone() is None
    assert gcpause._allocated < 5_000


def test_the_collection_owed_does_not_walk_what_the_last_pause_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """A replay's report is alive when its pause ends and mostly dropped when the next one begins:
    the full collection runs then, over the heap without it."""
    walked: list[int] = []
    monkeypatch.setattr(gcpause, "COLLECT_AFTER", 5_000)
    monkeypatch.setattr(gcpause, "_allocated", 0)
    monkeypatch.setattr(gcpause, "_heap", 0)
    monkeypatch.setattr(gc, "collect", lambda *generation: walked.append(len(gc.get_objects())) or 0)
    with gcpause.no_gc():
        report = [[i] for i in range(20_000)]  # what the replay returns
    assert walked == []  # owed, not run over the report
    with_report = len(gc.get_objects())
    del report
    with gcpause.no_gc():
        pass
    assert len(walked) == 1 and walked[0] < with_report - 19_000


def test_the_first_pause_of_a_process_only_measures(monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-shot command replays once: no full collection over what it just built."""
    collections: list[int] = []
    monkeypatch.setattr(gcpause, "_allocated", 0)
    monkeypatch.setattr(gcpause, "_heap", -1)
    monkeypatch.setattr(gc, "collect", lambda *generation: collections.append(1) or 0)
    with gcpause.no_gc():
        kept = [[i] for i in range(200_000)]
    assert collections == [] and gcpause._heap >= len(kept)


COLLECT_AT = 5_000


def test_no_collection_while_the_heap_has_not_grown(monkeypatch: pytest.MonkeyPatch) -> None:
    """A loop of replays whose reports are let go: the pauses allocate past the threshold, but what they
    built is gone by the next pause, so the heap is only counted, never walked; once the pauses leave a
    quarter of it behind, the collection runs."""
    collections: list[int] = []
    counted: list[int] = []
    gc.collect()
    get_objects = gc.get_objects
    monkeypatch.setattr(gcpause, "COLLECT_AFTER", COLLECT_AT)
    monkeypatch.setattr(gcpause, "_allocated", 0)
    monkeypatch.setattr(gcpause, "_heap", len(get_objects()))
    monkeypatch.setattr(gc, "collect", lambda *generation: collections.append(1) or 0)
    monkeypatch.setattr(gc, "get_objects", lambda *generation: counted.append(1) or get_objects())
    size = max(COLLECT_AT, gcpause._heap // 4) + 1_000  # past the threshold, whatever this process holds
    for _ in range(4):
        with gcpause.no_gc():
            report = [[i] for i in range(size)]  # past the threshold at each pause's end
        del report  # and let go before the next
    assert collections == [] and len(counted) == 3  # counted as the second to fourth pauses began, never walked
    with gcpause.no_gc():
        kept = [[i] for i in range(gcpause._heap // 4 + 1_000)]  # kept: the heap grows past a quarter
    assert collections == []
    with gcpause.no_gc():
        pass
    assert collections == [1] and len(kept) > 0


def test_a_heap_found_smaller_is_the_measure(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first pause measures what it built, its report included; once the report is gone the heap is
    found smaller, and growth is counted from there, so leftover cycles are not left to pile up."""
    collections: list[int] = []
    gc.collect()
    live = len(gc.get_objects())
    monkeypatch.setattr(gcpause, "COLLECT_AFTER", 5_000)
    monkeypatch.setattr(gcpause, "_allocated", 10_000_000)
    monkeypatch.setattr(gcpause, "_heap", 10 * live)  # measured while a large report was alive
    monkeypatch.setattr(gc, "collect", lambda *generation: collections.append(1) or 0)
    with gcpause.no_gc():
        pass
    assert collections == [] and gcpause._heap <= live + 1_000
    with gcpause.no_gc():
        kept = [[i] for i in range(live // 2)]  # half the heap again: past a quarter of the new measure
    with gcpause.no_gc():
        pass
    assert collections == [1] and len(kept) > 0
