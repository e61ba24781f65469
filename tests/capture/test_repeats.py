"""A session's request bodies kept once (``capture.repeats``): what a request repeats of the one
before shares its objects, and no body reads differently for it."""

from __future__ import annotations

import copy
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.sessions import session
from stream_doctor import replay
from stream_doctor.capture import load
from stream_doctor.capture.repeats import Repeats

MESSAGES = st.lists(
    st.one_of(
        st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": st.text(max_size=3)}),
        st.integers(0, 3),
        st.lists(st.booleans(), max_size=2),
    ),
    max_size=5,
)


def _next(previous: dict[str, Any], step: tuple[str, Any]) -> dict[str, Any]:
    """The next request: its history extended, truncated or edited, or another key changed."""
    kind, value = step
    body = orjson.loads(orjson.dumps(previous))  # parsed anew, as every line of a capture is
    if not isinstance(body["messages"], list):
        body["messages"] = []
    if kind == "extend":
        body["messages"] += value
    elif kind == "truncate":
        body["messages"] = body["messages"][value:]
    elif kind == "edit" and body["messages"]:
        body["messages"][value % len(body["messages"])] = {"role": "user", "content": "edited"}
    elif kind == "system":
        body["system"] = value
    else:
        body["messages"] = {"not": "a list"} if kind == "not a list" else body["messages"]
    return body


STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("extend"), MESSAGES),
        st.tuples(st.just("truncate"), st.integers(0, 3)),
        st.tuples(st.just("edit"), st.integers(0, 9)),
        st.tuples(st.just("system"), st.one_of(st.text(max_size=2), st.lists(st.integers(0, 2), max_size=2))),
        st.tuples(st.just("not a list"), st.none()),
    ),
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(MESSAGES, STEPS)
def test_each_body_reads_as_it_was_parsed(first: list[Any], steps: list[tuple[str, Any]]) -> None:
    body: dict[str, Any] = {"model": "m", "system": "be brief", "tools": [{"name": "f"}], "messages": first}
    bodies = [body]
    for step in steps:
        bodies.append(_next(bodies[-1], step))
    as_parsed = copy.deepcopy(bodies)
    repeats = Repeats()
    for each in bodies:
        repeats.share(each)
    assert bodies == as_parsed
    for before, after in zip(bodies, bodies[1:], strict=False):
        if isinstance(before["messages"], list) and isinstance(after["messages"], list):
            same = 0  # the leading run the two requests send alike is one set of objects
            while same < min(len(before["messages"]), len(after["messages"])):
                if before["messages"][same] != after["messages"][same]:
                    break
                assert after["messages"][same] is before["messages"][same]
                same += 1
            assert (
                all(  # the near miss: an item after the first difference stays the request's own
                    not isinstance(item, (dict, list)) or all(item is not old for old in before["messages"])
                    for item in after["messages"][same:]
                )
                or same == 0
            )
        if after["tools"] == before["tools"]:
            assert after["tools"] is before["tools"]


def test_a_value_of_another_type_is_never_shared() -> None:
    repeats = Repeats()
    first = {"messages": [{"a": 1}], "system": ["x"]}
    second = {"messages": {"0": {"a": 1}}, "system": ["x"], "tools": []}
    repeats.share(first)
    repeats.share(second)
    assert second["messages"] == {"0": {"a": 1}} and second["system"] is first["system"]
    assert second["messages"]["0"] is not first["messages"][0]
    repeats.share("not a body")  # a body that is no object is left alone, and forgets nothing
    third = {"messages": [{"a": 1}, {"b": 2}]}
    repeats.share(third)
    assert third["messages"][0] is not first["messages"][0]  # compared with the previous object body only


def test_an_envelope_session_keeps_its_history_once() -> None:
    """The requests of a session read from its envelope share the items they repeat; the replay's
    findings are those of the session read as it is."""
    data = session("anthropic", 5)
    bodies = [f.value["body"] for f in load("session.jsonl", None, data).frames if f.kind == "request"]
    assert len(bodies) == 5
    for before, after in zip(bodies, bodies[1:], strict=False):
        assert all(a is b for a, b in zip(before["messages"], after["messages"], strict=False))
        assert after["tools"] is before["tools"]
    report = replay(data)
    assert [turn.request.body["messages"][0] for turn in report.turns[1:]] == [bodies[0]["messages"][0]] * 4  # type: ignore[union-attr]
