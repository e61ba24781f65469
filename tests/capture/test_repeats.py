"""A session's request bodies kept once (``capture.repeats``): what a request repeats of the one
before shares its objects, and no body reads differently for it."""

from __future__ import annotations

import copy
import datetime
import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.sessions import session
from stream_doctor import replay
from stream_doctor.capture import load
from stream_doctor.capture import repeats as repeats_module
from stream_doctor.capture.repeats import Repeats
from stream_doctor.util.jsontext import equal

ITEMS = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": st.text(max_size=3)}),
    st.integers(0, 3),
    st.lists(st.booleans(), max_size=2),
    # written as another item's start, or equal to one; a new object each, as parsing makes them
    st.sampled_from([1.0, 12, "ab", "abc", [1], [1, 2]]).map(copy.deepcopy),
)
MESSAGES = st.lists(ITEMS, max_size=5)


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
        at, item = value
        body["messages"][at % len(body["messages"])] = {"role": "user", "content": "edited"} if item is None else item
    elif kind == "system":
        body["system"] = value
    elif kind == "lengthen" and body["messages"]:  # the last item written longer: ``12`` for ``1``
        last = body["messages"][-1]
        body["messages"][-1] = last * 10 + 2 if type(last) is int else [last]
    elif kind == "respell":  # the same values written otherwise: ``1.0`` for ``1``, keys in another order
        body["messages"] = [_respelled(item) for item in body["messages"]]
    else:
        body["messages"] = {"not": "a list"} if kind == "not a list" else body["messages"]
    return body


def _respelled(item: Any) -> Any:
    if type(item) is int:
        return float(item)
    return dict(reversed(item.items())) if type(item) is dict else item


STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("respell"), st.none()),
        st.tuples(st.just("lengthen"), st.none()),
        st.tuples(st.just("extend"), MESSAGES),
        st.tuples(st.just("truncate"), st.integers(0, 3)),
        st.tuples(st.just("edit"), st.tuples(st.integers(0, 9), st.one_of(st.none(), ITEMS))),
        st.tuples(st.just("system"), st.one_of(st.text(max_size=2), st.lists(st.integers(0, 2), max_size=2))),
        st.tuples(st.just("not a list"), st.none()),
    ),
    max_size=6,
)


@pytest.mark.slow  # hypothesis: 300 generated conversations, each body read twice (2.4 s of CPU)
@settings(max_examples=300, deadline=None)
@given(MESSAGES, STEPS, st.booleans())
def test_each_body_reads_as_it_was_parsed(first: list[Any], steps: list[tuple[str, Any]], json_text: bool) -> None:
    body: dict[str, Any] = {"model": "m", "system": "be brief", "tools": [{"name": "f"}], "messages": first}
    bodies = [body]
    for step in steps:
        bodies.append(_next(bodies[-1], step))
    as_parsed = copy.deepcopy(bodies)
    repeats = Repeats(json_text)
    for each in bodies:
        repeats.share(each)
    assert equal(bodies, as_parsed)  # the same JSON values: no item edited from true to 1 reads true
    for before, after in zip(bodies, bodies[1:], strict=False):
        if isinstance(before["messages"], list) and isinstance(after["messages"], list):
            same = 0  # the leading run the two requests send alike is one set of objects
            while same < min(len(before["messages"]), len(after["messages"])):
                if not equal(before["messages"][same], after["messages"][same]):
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


@pytest.mark.parametrize("json_text", [False, True])
def test_an_item_edited_from_true_to_1_keeps_its_own_object(json_text: bool) -> None:
    # Python's == says True == 1: shared, the edited request would read true. A JSON reader tells them
    # apart; 1.0 for 1 is the same JSON number (the near miss), shared.
    first = {"messages": [{"role": "user", "content": "a"}, {"input": {"all": True, "n": 1}}]}
    repeats = Repeats(json_text)
    repeats.share(first)
    edited = orjson.loads(orjson.dumps(first).replace(b'"all":true', b'"all":1'))
    repeats.share(edited)
    assert edited["messages"][0] is first["messages"][0] and edited["messages"][1] is not first["messages"][1]
    assert edited["messages"][1]["input"]["all"] == 1 and type(edited["messages"][1]["input"]["all"]) is int
    respelled = orjson.loads(orjson.dumps(edited).replace(b'"n":1', b'"n":1.0'))
    repeats.share(respelled)
    assert respelled["messages"] is edited["messages"]


def test_bytes_prove_a_parsed_body_s_items_only_where_they_are_the_same_values() -> None:
    # A cassette's YAML or a recording's parsed JSON may hold a date (orjson would write the string it
    # is) or NaN and infinities (written null, as None is): never shared for the string or the None.
    # The near miss: the same items, null among them, shared.
    repeats = Repeats()
    first = {"messages": [{"at": "2024-01-01", "x": None}, {"y": None}]}
    repeats.share(first)
    dated = {"messages": [{"at": datetime.date(2024, 1, 1), "x": None}, {"y": None}, {"n": 1}]}
    repeats.share(dated)
    assert dated["messages"][0] is not first["messages"][0] and dated["messages"][1] is not first["messages"][1]
    again = {"messages": [{"at": datetime.date(2024, 1, 1), "x": None}, {"y": float("nan")}, {"n": 1}]}
    repeats.share(again)
    assert again["messages"][0] is dated["messages"][0] and again["messages"][1] is not dated["messages"][1]
    same = copy.deepcopy(again)
    same["messages"][1] = {"y": float("nan")}
    repeats.share(same)  # (NaN is no value: never the same as another NaN, as ``==`` says)
    assert same["messages"][0] is again["messages"][0] and same["messages"][1] is not again["messages"][1]
    grown = {"messages": [{"at": datetime.date(2024, 1, 1), "x": None}, {"y": None}, {"n": 1}, {"n": 2}]}
    nulls = copy.deepcopy(grown)
    repeats.share(grown)
    repeats.share(nulls)
    assert all(item is old for item, old in zip(nulls["messages"], grown["messages"], strict=True))


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


def _origins(bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Which body each top-level value and each list item first appeared in: what is shared, as numbers."""
    first: dict[int, int] = {}
    shapes = []
    for number, body in enumerate(bodies):
        shape: dict[str, Any] = {}
        for key, value in body.items():
            items = [first.setdefault(id(item), number) for item in value] if type(value) is list else None
            shape[key] = (first.setdefault(id(value), number), items)
        shapes.append(shape)
    return shapes


@settings(max_examples=300, deadline=None)
@given(MESSAGES, STEPS)
def test_the_bytes_share_what_the_items_share(first: list[Any], steps: list[tuple[str, Any]]) -> None:
    """The envelope's fast path (lists compared as orjson writes them) shares exactly what comparing
    the items shares, whether the history is extended, truncated, edited or written otherwise."""
    body: dict[str, Any] = {"model": "m", "system": "be brief", "tools": [{"name": "f"}], "messages": first}
    bodies = [body]
    for step in steps:
        bodies.append(_next(bodies[-1], step))
    by_items, by_bytes = copy.deepcopy(bodies), copy.deepcopy(bodies)
    for kept, json_text in ((by_items, False), (by_bytes, True)):
        repeats = Repeats(json_text)
        for each in kept:
            repeats.share(each)
    assert by_bytes == by_items == bodies
    assert _origins(by_bytes) == _origins(by_items)


@pytest.mark.parametrize(
    ("before", "after", "by_bytes"),
    [
        ([{"a": 1}], [{"a": 1}, {"b": 2}], True),  # extended: the bytes say so
        ([{"a": 1}, "x"], [{"a": 1}, "x"], True),  # the same again
        ([1], [12], False),  # "[1" starts "[12]", but 1 is no item of it
        (["ab"], ["abc", "ab"], False),
        ([[1]], [[1, 2]], False),
        ([1], [1.0, 2], False),  # equal values written otherwise: compared item by item, and shared
        ([{"a": 1, "b": 2}], [{"b": 2, "a": 1}], False),
        ([True], [1], False),
        ([], [{"a": 1}], False),  # nothing to share
    ],
)
def test_the_bytes_decide_only_where_they_prove_it(
    monkeypatch: pytest.MonkeyPatch, before: list[Any], after: list[Any], by_bytes: bool
) -> None:
    compared: list[int] = []
    item_by_item = repeats_module._share_prefix
    monkeypatch.setattr(repeats_module, "_share_prefix", lambda *lists: compared.append(1) or item_by_item(*lists))
    first, second = {"messages": orjson.loads(orjson.dumps(before))}, {"messages": orjson.loads(orjson.dumps(after))}
    expected = copy.deepcopy([first, second])
    plain = Repeats()
    plain.share(expected[0])
    plain.share(expected[1])
    compared.clear()
    repeats = Repeats(json_text=True)
    repeats.share(first)
    repeats.share(second)
    assert (not compared) is by_bytes
    assert second["messages"] == after and _origins([first, second]) == _origins(expected)


def _line(body: dict[str, Any], style: str, t: int) -> bytes:
    """A request record's line as some writer would write it: orjson's own (with a time before the body
    that differs from line to line), with spaces, with every non-ASCII character escaped, with a key after
    the body, with an earlier ``body`` key that the later one replaces, or with a header named body."""
    written = orjson.dumps(body)
    if style == "orjson":
        return b'{"sd":"request","t":%d,"body":%s}' % (t, written)
    if style == "spaced":
        return json.dumps({"sd": "request", "body": body}).encode()
    if style == "ascii":
        return json.dumps({"sd": "request", "body": body}, separators=(",", ":")).encode()
    if style == "after":
        return b'{"sd":"request","body":%s,"t":%d}' % (written, t)
    if style == "twice":
        return b'{"sd":"request","body":{"messages":[]},"body":%s}' % written
    return b'{"sd":"request","headers":{"body":"x"},"body":%s}' % written


STYLES = st.sampled_from(["orjson", "orjson", "orjson", "spaced", "ascii", "after", "twice", "header"])


@settings(max_examples=300, deadline=None)
@given(MESSAGES, STEPS, st.lists(STYLES, min_size=7, max_size=7))
def test_the_lines_share_what_the_items_share(
    first: list[Any], steps: list[tuple[str, Any]], styles: list[str]
) -> None:
    """Bodies compared on the lines they were read from (the envelope's reader) share exactly what
    comparing the items shares, whatever wrote each line, however the history changed."""
    body: dict[str, Any] = {"model": "m", "system": "be brief", "tools": [{"name": "f"}], "messages": first}
    bodies = [body]
    for step in steps:
        bodies.append(_next(bodies[-1], step))
    lines = [_line(each, style, t) for t, (each, style) in enumerate(zip(bodies, styles, strict=False))]
    repeats, plain = Repeats(json_text=True), Repeats()
    records = [_read(repeats, line) for line in lines]
    assert records == [orjson.loads(line) for line in lines]  # each record as its line parses, proved or parsed
    by_lines = [record["body"] for record in records]
    by_items = [orjson.loads(line)["body"] for line in lines]
    for other in by_items:
        plain.share(other)
    assert by_lines == by_items == bodies
    assert _origins(by_lines) == _origins(by_items)


def _read(repeats: Repeats, line: bytes) -> dict[str, Any]:
    """A request line's record as the envelope's reader has it (``capture/jsonl.stream_envelope``)."""
    record = repeats.record_of(line)
    if record is None:
        record = orjson.loads(line)
        repeats.share(record["body"], line)
    return record


def _session_lines(turns: int) -> list[bytes]:
    return [line for line in session("anthropic", turns).splitlines() if line.startswith(b'{"sd":"request"')]


def test_a_session_s_lines_are_compared_as_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """From the third request of a session written by orjson, a request that extends the history is
    proved so on its line and read for its new items only: nothing is written again (the first two are
    parsed and written, to find the list that grows); a request whose system prompt changed is not (the
    near miss)."""
    written: list[int] = []
    dumps = orjson.dumps
    monkeypatch.setattr(repeats_module.orjson, "dumps", lambda *a, **k: written.append(1) or dumps(*a, **k))
    lines = _session_lines(6)
    edited = orjson.loads(lines[-1])
    edited["body"]["system"] = "another prompt"
    lines.append(dumps(edited))
    repeats = Repeats(json_text=True)
    seen, bodies = [], []
    for line in lines:
        written.clear()
        proved = repeats.record_of(line)
        bodies.append(proved["body"] if proved is not None else _read(repeats, line)["body"])
        seen.append((proved is not None, bool(written)))
    assert seen == [
        (False, True),
        (False, True),
        (True, False),
        (True, False),
        (True, False),
        (True, False),
        (False, True),
    ]
    assert bodies == [orjson.loads(line)["body"] for line in lines]
    for before, after in zip(bodies, bodies[1:], strict=False):
        assert all(a is b for a, b in zip(before["messages"], after["messages"], strict=False))
        assert after["tools"] is before["tools"]


@pytest.mark.parametrize(
    ("changed", "proved"),
    [
        (b'{"sd":"request","t":9,"body":{"model":"m","messages":[1,2,3],"stream":true}}', True),  # items added
        (b'{"sd":"request","t":9,"body":{"model":"m","messages":[1,2,{"a":[]}],"stream":true}}', True),
        (b'{"sd":"request","t":9,"body":{"model":"m","messages":[1,2],"stream":true},"x":1}', False),  # a key after
        (b'{"sd":"request","t":9,"body":{"model":"m","messages":[1,2,3 ],"stream":true}}', True),  # spaced items
        (b'{"sd":"request","t":9,"body":{"model":"m","messages":[1,23],"stream":true}}', False),  # the last longer
        (b'{"sd":"request","t":9,"body":{"model":"m","messages":[1,2],"messages":[1,2,3],"stream":true}}', False),
        (b'{"sd":"request","t":9,"body":{"model":"m","messages":[1,2],"x":[3],"stream":true}}', False),
        (b'{"sd":"request","t":9,"body":{"model":"m","messages":[1,2,3],"stream":false}}', False),
        (b'{"sd":"request","t":9,"body":{"model":"m","messages":[1,2,3]],"stream":true}}', False),  # not JSON
        (b'{"sd":"request","t":9,"body":{"model":"m","messages":[1,2,],"stream":true}}', False),  # not JSON
        (b'{"sd":"request","t":9,"body":{"model":"m","messages":[1,2, ],"stream":true}}', False),  # not JSON
        (b'{"sd":"request","t":9,"x":{"body":{"model":"m","messages":[1,2,3],"stream":true}}}', False),
        (b'{"sd":"request","t":9,"body":{"model":"m","messages":[1,2,3],"stream":1234}}', False),  # as long
        (b'{"sd":"request","t":9,"body":{"model":"n","messages":[1,2,3],"stream":true}}', False),  # as long
        (b'{"sd":"request","t":9,"body":{"model":"m","messages":[1,7,3],"stream":true}}', False),  # an edit
        # the body's key escaped, and a later key that ends in body" holding the previous text with an item
        (
            b'{"sd":"request","\\u0062ody":{"model":"m","messages":[5,6,7],"stream":true},'
            b'"a\\"body":{"model":"m","messages":[1,2,3],"stream":true}}',
            False,
        ),
    ],
)
def test_a_line_proves_only_what_it_holds(changed: bytes, proved: bool) -> None:
    """After two lines that anchor the ``messages`` list, a line that is not the same text with items
    added to it reads as parsed, and shares only what the items share."""
    lines = [
        b'{"sd":"request","t":1,"body":{"model":"m","messages":[1],"stream":true}}',
        b'{"sd":"request","t":22,"body":{"model":"m","messages":[1,2],"stream":true}}',
        changed,
    ]
    records = [orjson.loads(line) for line in lines[:2]]
    try:
        records.append(orjson.loads(changed))
    except orjson.JSONDecodeError:  # what the reader never hands on: the proof must still refuse it
        records.append({"body": {"model": "m", "messages": [1, 2, 3], "stream": True}})
    bodies = [record["body"] if "body" in record else record["x"]["body"] for record in records]
    assert bodies[2]["messages"] in ([1, 2, 3], [1, 2], [5, 6, 7], [1, 23], [1, 2, {"a": []}], [1, 7, 3])
    expected = copy.deepcopy(bodies)
    repeats, plain = Repeats(json_text=True), Repeats()
    for other in expected:
        plain.share(other)
    proofs = []
    for body, line in zip(bodies, lines, strict=True):
        record = repeats.record_of(line)
        proofs.append(record is not None)
        if record is None:
            repeats.share(body, line)
        else:
            bodies[-1] = record["body"]
    assert proofs == [False, False, proved]  # the second line anchors the list that grew, the third is proved or not
    assert bodies == expected and _origins(bodies) == _origins(expected)


ANCHORING = (
    b'{"sd":"request","t":1,"body":{"model":"m","messages":[{"a":1}],"stream":true}}',
    b'{"sd":"request","t":22,"body":{"model":"m","messages":[{"a":1},[2]],"stream":true}}',
)
PROVED = b'{"sd":"request","t":3,"body":{"model":"m","messages":[{"a":1},[2],3],"stream":true}}'


def _anchored() -> Repeats:
    """A reader that has seen the two lines that anchor ``messages``: ``PROVED`` would be proved next."""
    repeats = Repeats(json_text=True)
    for line in ANCHORING:
        repeats.share(orjson.loads(line)["body"], line)
    return repeats


def test_the_line_next_to_the_anchoring_ones_is_proved() -> None:
    assert _anchored().record_of(PROVED) == orjson.loads(PROVED)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(PROVED)), st.integers(0, 2), st.sampled_from(b' ,]}[{"0:\\')), max_size=3))
def test_a_line_a_byte_away_from_a_proved_one_reads_as_a_parser_reads_it(edits: list[tuple[int, int, int]]) -> None:
    """A line up to three bytes off the one the proof expects (a byte deleted, replaced or put in,
    anywhere): its record is what ``orjson.loads`` reads, or it is not proved; never a record for a
    line that is not JSON."""
    changed = bytearray(PROVED)
    for at, how, byte in edits:
        where = at % (len(changed) + 1)
        if how == 0 and where < len(changed):
            del changed[where]
        elif how == 1 and where < len(changed):
            changed[where] = byte
        else:
            changed.insert(where, byte)
    record = _anchored().record_of(bytes(changed))
    if record is not None:
        assert record == orjson.loads(bytes(changed))


def test_lines_with_the_same_text_before_the_body_are_each_their_own_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session's requests repeat the text before the body (``{"sd":"request","method":…,"url":…,``): once
    a line was proved, the next with that same text is read without parsing it again, and still gives a
    record of its own, which its reader may write into (a redacted URL) without changing the next one's."""
    loads = orjson.loads
    parsed: list[bytes] = []
    monkeypatch.setattr(repeats_module.orjson, "loads", lambda data, *a: parsed.append(bytes(data)) or loads(data))
    lines = _session_lines(6)
    repeats = Repeats(json_text=True)
    records = [_read(repeats, line) for line in lines]
    assert records == [loads(line) for line in lines]
    heads = [data for data in parsed if data.endswith((b'"body":0}', b'"body":1}'))]
    assert len(heads) == 2  # the anchoring line's, closed with 0 and with 1; never again
    records[3]["url"] = "redacted"
    assert records[4]["url"] == loads(lines[4])["url"] != "redacted"
    assert len({id(record) for record in records}) == len(records)
