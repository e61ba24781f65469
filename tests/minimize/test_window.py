"""A window of turns judges a candidate as a whole replay would: the same verdict, from fewer turns."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stream_doctor
from benchmarks.sessions import session
from stream_doctor.minimizer import oracle
from stream_doctor.minimizer.oracle import Oracle
from stream_doctor.minimizer.run import _Original, _read
from stream_doctor.minimizer.units import Unit
from stream_doctor.minimizer.window import Window, turns_of, width, window
from stream_doctor.values.options import Options


def _unit(turn: int, kind: str = "event") -> Unit:
    return Unit(f"{kind} {turn}\n".encode(), kind, turn)


def _turns(*numbers: int) -> list[Unit]:
    return [unit for n in numbers for unit in (_unit(n, "request"), _unit(n), _unit(n, "execute"))]


def test_a_change_in_one_turn_is_judged_on_it_and_the_turns_its_findings_read() -> None:
    held = _turns(1, 2, 3, 4, 5, 6)
    candidate = [unit for unit in held if not (unit.turn == 3 and unit.kind == "execute")]

    found = window(held, candidate, 1)

    assert found is not None
    assert found.turns == (2, 3, 4) and found.judged == {3, 4}  # turn 4's findings read turn 3
    assert [unit.turn for unit in found.units] == [2, 2, 2, 3, 3, 4, 4, 4]
    assert window(held, candidate, 0) is not None and window(held, candidate, 0).judged == {3}  # type: ignore[union-attr]


def test_removed_turns_are_judged_on_the_turn_after_them_and_the_last_turn_on_the_end() -> None:
    held = _turns(1, 2, 3, 4, 5, 6)

    middle = window(held, _turns(1, 2, 5, 6), 1)
    tail = window(held, _turns(1, 2, 3, 4), 1)

    assert middle is not None and middle.judged == {5} and middle.turns == (2, 5)  # turn 6 still reads 5, 6
    assert tail is not None and tail.judged == {4} and tail.turns == (3, 4)  # now the last: the capture's end


def test_no_window_where_the_engine_would_cut_other_turns_or_where_it_is_the_whole() -> None:
    held = _turns(1, 2, 3, 4)
    without_request = [unit for unit in held if not (unit.turn == 3 and unit.kind == "request")]

    assert turns_of(without_request) is None  # turn 3's events would be turn 2's
    assert window(held, without_request, 1) is None
    assert window(held, [u for u in held if not (u.turn == 1 and u.kind == "execute")], 4) is None  # all of it
    assert window(held, _turns(4), 1) is None  # one turn left: a whole replay is as small
    assert width(["SD102"]) == 1 and width(["SD608"]) == 1  # the widest bounded reach: a new SD602-SD610
    assert width(["SD607"]) is None  # an id streamed in any earlier turn: whole replays


@pytest.fixture(scope="module", params=["anthropic", "openai", "openai-responses", "chained"])
def six_turns(request: pytest.FixtureRequest) -> _Original:
    """Six turns, two of whose calls ran with ``{}``: SD102 in turns 2 and 5 (``chained``: a Responses
    session whose requests name the previous response instead of sending the history)."""
    provider, chained = ("openai-responses", True) if request.param == "chained" else (request.param, False)
    data = session(provider, 6, broken=[2, 5], personal=True, chained=chained)
    return _read(data, "six.jsonl", ("SD102",), Options(), None)


def _candidates(held: list[Unit]) -> st.SearchStrategy[list[Unit]]:
    """Turns removed, a frame removed, or a string edited in one turn: what the passes try."""
    numbers = sorted({unit.turn for unit in held})
    removed = st.sets(st.sampled_from(numbers), max_size=len(numbers) - 1).map(
        lambda gone: [unit for unit in held if unit.turn not in gone]
    )
    dropped = st.integers(0, len(held) - 1).map(lambda at: held[:at] + held[at + 1 :])
    edited = st.sampled_from(
        [at for at, unit in enumerate(held) if unit.payload is not None and unit.kind != "request"]
    )
    return st.one_of(removed, dropped, edited.map(functools.partial(_emptied, held)))


def _emptied(held: list[Unit], at: int) -> list[Unit]:
    """``held`` with the arguments of unit ``at`` (an executed input, a fragment) emptied, if it has any
    (OpenAI Chat's fragments stay: a string of them gone is what the frame candidates try)."""
    value = held[at].value()
    if held[at].kind == "execute":
        value["input"] = {}
    elif isinstance(value.get("data"), dict) and isinstance(value["data"].get("delta"), str):  # Responses
        value["data"]["delta"] = ""
    elif isinstance(value.get("data"), dict) and isinstance(value["data"].get("delta"), dict):  # Anthropic
        value["data"]["delta"] = {**value["data"]["delta"], "partial_json": ""}
    return [*held[:at], held[at].edited(value), *held[at + 1 :]]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_a_window_gives_the_verdict_a_whole_replay_gives(six_turns: _Original, data: st.DataObject) -> None:
    held = six_turns.units
    candidate = data.draw(_candidates(held))
    windowed, whole = _oracles(six_turns)

    verdict = windowed.accepts(six_turns.layout, held, candidate)

    assert verdict == whole.accepts(six_turns.layout, held, candidate)
    if verdict:  # and it knows where the kept finding now shows, as the whole replay says
        assert windowed.kept_turns == whole.kept_turns_of(_shown(six_turns, candidate), candidate)


def _oracles(original: _Original) -> tuple[Oracle, Oracle]:
    held = original.oracle
    assert held.reach == 1 and held.kept_turns == {"SD102": frozenset({2, 5})}

    def copy(reach: int | None) -> Oracle:
        oracle = Oracle(
            held.name,
            held.options,
            held.keep,
            held.call_id,
            held.claims,
            held.allowed,
            held.provider,
            held.container,
            None,
        )
        oracle.reach, oracle.kept_turns = reach, held.kept_turns
        return oracle

    return copy(1), copy(None)


def _shown(original: _Original, units: list[Unit]) -> dict[str, frozenset[int | None]]:
    with stream_doctor.replay(original.layout.join(units), name="six.jsonl") as report:
        return {"SD102": frozenset(f.location.interaction for f in report.findings if f.code == "SD102")}


def test_a_result_a_window_misjudged_is_searched_again_by_whole_replays(monkeypatch: pytest.MonkeyPatch) -> None:
    data = session("anthropic", 6, broken=[5], personal=True)
    whole = stream_doctor.minimize(data, "SD102", name="six.jsonl")

    # every candidate judged by a window that replays nothing and accepts it, as a window too narrow for
    # what some rule reads might: the search ends on a capture without the SD102
    def blind(
        self: Oracle, layout: object, found: object, shown: dict[str, frozenset[int]], present: set[int]
    ) -> object:
        self.windows += 1
        return shown

    monkeypatch.setattr(oracle, "window", lambda held, candidate, reach: Window([], (), frozenset()))
    monkeypatch.setattr(Oracle, "_judge_window", blind)
    result = stream_doctor.minimize(data, "SD102", name="six.jsonl")

    assert result.windowed  # the whole replay of what the windows kept rejected it: searched again, whole
    assert result.data == whole.data and [f.code for f in result.kept] == ["SD102"]
