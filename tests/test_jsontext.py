"""``jsontext``: orjson's bytes for every value a capture can hold, also where orjson refuses to write."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from stream_doctor.util import jsontext

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.json_values import json_values  # noqa: E402

OPTIONS = [0, orjson.OPT_INDENT_2, orjson.OPT_SORT_KEYS, orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS]
OPTIONS += [orjson.OPT_APPEND_NEWLINE]

values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


def nested(depth: int, kind: str = "list") -> Any:
    """A value ``depth`` containers deep, built without recursion."""
    value: Any = [] if kind == "list" else {}
    for _ in range(depth - 1):
        value = [value] if kind == "list" else {"k": value}
    return value


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(values, st.sampled_from(OPTIONS))
def test_the_loop_writes_orjsons_bytes(value: Any, option: int) -> None:
    # The loop that writes what orjson refuses is byte for byte orjson where orjson writes.
    assert jsontext._written(value, option, None) == orjson.dumps(value, option=option)


@pytest.mark.parametrize("kind", ["list", "dict"])
@pytest.mark.parametrize("depth", [255, 300, 1023])
def test_dumps_writes_what_orjson_reads_at_any_depth(kind: str, depth: int) -> None:
    value = nested(depth, kind)
    with pytest.raises(orjson.JSONEncodeError):
        orjson.dumps(value)
    text = jsontext.dumps(value)
    opened = b"[" if kind == "list" else b'{"k":'
    assert text.startswith(opened * (depth - 1)) and text.count(b"[" if kind == "list" else b"{") == depth
    assert jsontext.dumps(orjson.loads(text)) == text  # read back whole, written again the same
    indented = jsontext.dumps(value, orjson.OPT_INDENT_2)
    assert jsontext.dumps(orjson.loads(indented)) == text


@pytest.mark.parametrize("depth", [255, 1023])
def test_shown_cuts_what_orjson_cannot_write_with_a_marker(depth: int) -> None:
    value = {"arguments": nested(depth)}
    text = jsontext.shown(value)
    read = orjson.loads(text)  # any JSON reader reads it: 254 levels
    for _ in range(jsontext.WRITABLE_DEPTH):  # the object and 253 lists
        read = read["arguments"] if isinstance(read, dict) else read[0]
    assert read == jsontext.CUT
    assert text.count(b"[") == jsontext.WRITABLE_DEPTH - 1


def test_a_value_orjson_writes_is_never_cut() -> None:
    value = {"a": nested(253)}
    assert jsontext.shown(value) == jsontext.dumps(value) == orjson.dumps(value)


def test_lone_surrogates_are_written_as_visible_escapes() -> None:
    # U+DCE9 is byte 0xE9 of a file name that is not UTF-8 (os.fsdecode); U+D800 a lone surrogate
    # that json.loads makes of "\ud800".
    value = {"path": "caf\udce9.sse", "caf\udce9": ["\ud800x", "fine"]}
    expected = {"path": "caf\\xe9.sse", "caf\\xe9": ["\\ud800x", "fine"]}
    for write in (jsontext.dumps, jsontext.shown):
        for option in OPTIONS:
            assert orjson.loads(write(value, option)) == expected
    assert jsontext.escaped("a\udc80\udcff\udc7f\udfff") == "a\\x80\\xff\\udc7f\\udfff"


def test_brief_quotes_any_value_bounded() -> None:
    assert jsontext.brief("x") == '"x"'
    assert jsontext.brief({"a": 1}) == '{"a":1}'
    assert jsontext.brief(nested(1000), 20) == "[" * 19 + "…"
    assert jsontext.brief(list(range(1000)), 10) == "[0,1,2,3,…"


def _normalised(value: Any) -> Any:
    """The reference's view of a value: an integral float is the integer it is (JSON has one number type)."""
    if isinstance(value, dict):
        return {k: _normalised(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalised(v) for v in value]
    if type(value) is float and value.is_integer() and -(2**63) <= value < 2**64:
        return int(value)
    return value


def _reference(a: Any, b: Any) -> bool:
    """The same JSON value: the same bytes, keys sorted, once integral floats are integers."""
    return orjson.dumps(_normalised(a), option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        _normalised(b), option=orjson.OPT_SORT_KEYS
    )


def _variant(value: Any, flips: Any) -> Any:
    """A copy of ``value`` where ``flips`` (a stream of booleans) says which scalars change to their
    neighbour a JSON reader may or may not tell apart: ``true``/``1``, ``false``/``0``, ``1``/``1.0``,
    ``1.5``/``1.5`` written as another float, and which objects change their key order."""
    if isinstance(value, dict):
        items = [(k, _variant(v, flips)) for k, v in value.items()]
        return dict(reversed(items) if next(flips) else items)
    if isinstance(value, list):
        return [_variant(v, flips) for v in value]
    if not next(flips):
        return value
    if type(value) is bool:
        return int(value)
    if type(value) is int:
        return float(value) if abs(value) < 2**53 else (value == 1)
    if type(value) is float and value.is_integer() and abs(value) < 2**53:
        return int(value) if value else False
    return value


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(json_values(4, 4, 24), json_values(4, 4, 24), st.randoms(use_true_random=False))
def test_equal_is_json_equality(value: Any, unrelated: Any, chance: Any) -> None:
    # Against a value and its neighbours (a boolean for a number, a float for an integer, another key
    # order) and against any other value: the same answer as the reference.
    flips = iter(lambda: chance.random() < 0.3, None)
    for other in (value, orjson.loads(orjson.dumps(value)), _variant(value, flips), unrelated):
        assert jsontext.equal(value, other) == _reference(value, other) == jsontext.equal(other, value)


_LONG_TEXT = "line\n" * 1000  # 5,000 characters: over the length that makes ``equal`` walk a value


def _shapes(value: Any) -> list[Any]:
    """``value`` where each way ``equal`` compares meets it: a long list (item by item), a long string
    beside it and one nested in a message (walked), and many parts (orjson's bytes)."""
    return [
        [value] + [{"n": n} for n in range(70)],
        {"content": _LONG_TEXT, "value": value},
        [{"role": "user", "content": [{"type": "text", "text": _LONG_TEXT}, {"input": value}]}],
        {"items": [value] + list(range(100)), "text": _LONG_TEXT},
    ]


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(json_values(4, 4, 24), st.randoms(use_true_random=False))
def test_equal_is_json_equality_in_every_shape_it_compares_apart(value: Any, chance: Any) -> None:
    # A history of many items, a value holding a long string, a value of many parts: each is compared
    # its own way (item by item, walked, written out), and each gives the reference's answer.
    flips = iter(lambda: chance.random() < 0.3, None)
    other = _variant(value, flips)
    for mine, theirs in zip(_shapes(value), _shapes(other), strict=True):
        assert jsontext.equal(mine, theirs) == _reference(mine, theirs) == jsontext.equal(theirs, mine)
        assert jsontext.equal(mine, orjson.loads(orjson.dumps(mine)))


def test_equal_tells_booleans_from_numbers_and_not_integers_from_floats() -> None:
    assert not jsontext.equal({"force": True}, {"force": 1})
    assert not jsontext.equal([False], [0]) and not jsontext.equal([0.0], [False])
    assert not jsontext.equal(True, False) and jsontext.equal(True, True)
    assert jsontext.equal({"n": 1, "m": [2]}, {"m": [2.0], "n": 1.0})  # key order and 1/1.0 do not count
    assert jsontext.equal(-0.0, 0) and not jsontext.equal(None, False) and not jsontext.equal("1", 1)
    assert not jsontext.equal([1], {"0": 1}) and not jsontext.equal([[]], [{}])


def test_equal_tells_booleans_from_numbers_in_values_of_many_parts_too() -> None:
    # Past the parts walked (``_WALKED``) a value is compared as orjson's bytes: the same answers.
    many = [{"n": n, "flag": n % 2 == 0, "name": str(n)} for n in range(200)]
    copy = orjson.loads(orjson.dumps(many))
    assert jsontext.equal(many, copy)
    copy[150]["flag"] = 1  # ``True == 1`` in Python
    assert not jsontext.equal(many, copy) and not jsontext.equal(copy, many)
    copy[150]["flag"] = True
    copy[199] = {"name": "199", "flag": False, "n": 199.0}  # another key order, 1.0 for 1
    assert jsontext.equal(many, copy)
    copy[199]["flag"] = 0
    assert not jsontext.equal(many, copy)
    # A value of few members holding a long string (a file's content) is walked: the same answers.
    content = "line\n" * 2000
    written = {"path": "a.py", "content": content, "append": True, "mode": [1, {"x": False}]}
    assert jsontext.equal(written, {"mode": [1.0, {"x": False}], "content": content, "path": "a.py", "append": True})
    assert not jsontext.equal(written, {**written, "append": 1})
    assert not jsontext.equal(written, {**written, "mode": [True, {"x": False}]})
    assert not jsontext.equal(written, {**written, "mode": [1, {"x": 0}]})


def test_equal_at_any_depth() -> None:
    assert jsontext.equal(nested(5000), nested(5000))
    assert not jsontext.equal(nested(5000), nested(4999))
    assert not jsontext.equal(nested(5000, "dict"), nested(5000))
    for depth in (1024, 3000):  # orjson's reading depth, and past Python's recursion limit
        deep, other = nested(depth), nested(depth)
        deep[0][0].append(1)
        other[0][0].append(1.0)
        assert jsontext.equal(deep, other)  # 1 is 1.0
        other[0][0][-1] = True
        assert not jsontext.equal(deep, other)  # true is not 1
        deep_object, other_object = nested(depth, "dict"), nested(depth, "dict")
        deep_object["k"]["flag"], other_object["k"]["flag"] = False, 0
        assert not jsontext.equal(deep_object, other_object)


def test_equal_over_a_shared_history_compares_the_items_that_are_not_shared() -> None:
    # A session's history repeating the previous request's holds its objects: the one item edited
    # from true to 1 is found, also when Python's == says the lists are equal.
    before = [{"role": "user", "content": str(n), "input": {"append": True}} for n in range(50)]
    repeated = list(before)
    assert jsontext.equal(repeated, before)
    repeated[30] = {"role": "user", "content": "30", "input": {"append": 1}}
    assert repeated == before and not jsontext.equal(repeated, before)


def test_integers_beyond_64_bits_are_written_as_the_numbers_they_are() -> None:
    """json.loads (a client profile's parser) reads integers of any size; orjson writes 64 bits. Reports
    write the number itself, also nested, in both answers; the HTML report's previews went through json."""
    import json

    import orjson

    from stream_doctor.util import jsontext

    value = {"big": 10**30, "list": [-(10**25), 1], "ok": 2**64 - 1}
    assert json.loads(jsontext.shown(value)) == value  # orjson itself reads such a number as a float
    assert json.loads(jsontext.dumps(value)) == value
    assert jsontext.shown(value, orjson.OPT_INDENT_2).decode().count("\n") > 3
