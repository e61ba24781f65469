"""A turn is handed only the stream rules with something to read in it (``rules/dispatch.py``), and
that changes no finding: on every fixture's turns, and on turns made from them with any subset of
their problems, the dispatched rules find exactly what every selected rule finds."""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import get_args

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_doctor.accumulate.irregularities import UnknownBlock
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.engine.pipeline import replay
from stream_doctor.engine.stages import RunError, selected_rules, stream_dispatch
from stream_doctor.rules import RULES
from stream_doctor.rules.base import Need
from stream_doctor.rules.dispatch import present
from stream_doctor.values.options import Options
from tests.conftest import fixture_files


@functools.cache
def _streams() -> tuple[AccumulatedStream, ...]:
    """Every turn's stream of every fixture replayed under the default options."""
    found: list[AccumulatedStream] = []
    for path in fixture_files():
        try:
            report = replay(str(path), Options())
        except RunError:
            continue  # a fixture of a capture that cannot be replayed: no stream
        found += [turn.stream for turn in report.turns]
    return tuple(found)


def _found(stream: AccumulatedStream, dispatched: bool) -> list[tuple[object, ...]]:
    rules = stream_dispatch((), ()).rules_for(stream) if dispatched else selected_rules((), ())
    findings = [finding for rule in rules for finding in rule.check(stream, rule)]
    return sorted((f.code, f.sort_key, f.message, f.location) for f in findings)


def test_every_fixture_turn_finds_the_same_with_the_rules_it_is_handed() -> None:
    streams = _streams()
    assert len(streams) > 200
    assert sum(1 for stream in streams if stream.problems or stream.stream_problems) > 50
    for stream in streams:
        assert _found(stream, dispatched=True) == _found(stream, dispatched=False), stream.capture.path


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_turn_with_any_subset_of_its_problems_finds_the_same(data: st.DataObject) -> None:
    # The neighbours of each fixture turn: some of its problems left out, so each rule meets turns
    # where its facts are there and turns where they are not.
    stream = data.draw(st.sampled_from([s for s in _streams() if s.problems or s.stream_problems]))
    kept = data.draw(st.lists(st.booleans(), min_size=len(stream.problems), max_size=len(stream.problems)))
    kept_too = data.draw(
        st.lists(st.booleans(), min_size=len(stream.stream_problems), max_size=len(stream.stream_problems))
    )
    fewer = replace(
        stream,
        problems=tuple(p for p, keep in zip(stream.problems, kept, strict=True) if keep),
        stream_problems=tuple(p for p, keep in zip(stream.stream_problems, kept_too, strict=True) if keep),
    )
    assert _found(fewer, dispatched=True) == _found(fewer, dispatched=False)


def test_a_rule_of_one_problem_is_handed_the_turns_that_have_it_only() -> None:
    sd401 = RULES["SD401"]
    stream = next(s for s in _streams() if any(type(p) is UnknownBlock for p in s.stream_problems))
    assert sd401 in stream_dispatch((), ()).rules_for(stream)
    clean = replace(stream, stream_problems=tuple(p for p in stream.stream_problems if type(p) is not UnknownBlock))
    assert sd401 not in stream_dispatch((), ()).rules_for(clean)  # near miss: the same turn without it
    every_turn = stream_dispatch((), ()).every_turn
    assert RULES["SD201"] in every_turn and sd401 not in every_turn  # SD201 reads the calls themselves


def test_only_the_rules_a_selection_leaves_are_handed_a_turn() -> None:
    stream = next(s for s in _streams() if any(type(p) is UnknownBlock for p in s.stream_problems))
    assert RULES["SD401"] not in stream_dispatch((), ("SD401",)).rules_for(stream)
    assert [rule.code for rule in stream_dispatch(("SD401",), ()).rules_for(stream)] == ["SD401"]


def test_a_rule_that_needs_part_of_a_stream_is_handed_the_turns_that_have_it_only() -> None:
    sd301 = RULES["SD301"]  # needs an incomplete call
    cut = next(s for s in _streams() if any(call.status != "complete" for call in s.calls))
    assert sd301 in stream_dispatch((), ()).rules_for(cut)
    clean = next(s for s in _streams() if s.calls and not present(s))
    handed = stream_dispatch((), ()).rules_for(clean)
    assert sd301 not in handed and RULES["SD304"] in handed  # SD304 reads every turn's stop reason
    assert {rule.needs for rule in stream_dispatch((), ()).every_turn} >= set(get_args(Need))  # each is needed
