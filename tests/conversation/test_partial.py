"""The partial-parse hazard: the first fragment at which every required property had a value, if one changed later."""

from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_doctor.accumulate.fragments import FragmentTexts
from stream_doctor.conversation import partial
from stream_doctor.conversation.partial import eager_point, top_level_values
from tests.json_values import json_text, json_values


def test_the_seed_case_command_in() -> None:
    fragments = ["", '{"command": "in', "stall -r requir", 'ements.txt", "timeout": 300}']
    point = eager_point(fragments, "".join(fragments), ["command"])
    assert point is not None
    assert point.fragment == 1
    assert point.seen == {"command": '"in"'} and point.final == {"command": '"install -r requirements.txt"'}


def test_values_complete_in_their_fragment_are_no_hazard() -> None:
    fragments = ["", '{"location": "Porto, Portugal"', ', "unit": "celsius"}']
    assert eager_point(fragments, "".join(fragments), ["location"]) is None
    # only the closing quote missing: a repairing client already reads the final value
    fragments = ['{"location": "Porto', '"}']
    assert eager_point(fragments, "".join(fragments), ["location"]) is None


def test_the_last_required_property_decides_and_numbers_and_containers_count() -> None:
    fragments = ['{"a": "x", "n": 1', '0, "b": [1', ", 2]}"]
    raw = "".join(fragments)
    assert eager_point(fragments, raw, ["a"]) is None
    point = eager_point(fragments, raw, ["a", "n"])
    assert point is not None and point.fragment == 0 and point.seen == {"n": "1…"}
    point = eager_point(fragments, raw, ["b"])
    assert point is not None and point.fragment == 1 and point.final == {"b": "[1, 2]"}
    assert eager_point(['{"ok": tr', "ue}"], '{"ok": true}', ["ok"]) is None  # a partial literal is completed


def test_missing_required_property_or_single_fragment_is_none() -> None:
    assert eager_point(['{"a": "x"', "}"], '{"a": "x"}', ["b"]) is None
    assert eager_point(['{"a": "x"}'], '{"a": "x"}', ["a"]) is None


def test_top_level_values_skip_nested_keys_and_strings_with_structure() -> None:
    raw = '{"a": {"b": "c,}"}, "d": "e\\"}", "f": [1, {"g": 2}], "h": null}'
    values = top_level_values(raw)
    assert {k: raw[s:e] for k, (s, e) in values.items()} == {
        "a": '{"b": "c,}"}',
        "d": '"e\\"}"',
        "f": '[1, {"g": 2}]',
        "h": "null",
    }


def test_one_pass_over_the_buffer_whatever_the_fragments(monkeypatch: pytest.MonkeyPatch) -> None:
    """The buffer is tokenised once, however many fragments it came in: no parse repeated per
    fragment (the cost is linear in the buffer; benchmarks/ measures speed, not this test)."""
    scans: list[int] = []
    real = partial._TOKEN

    class Counting:
        def finditer(self, text: str) -> object:
            scans.append(len(text))
            return real.finditer(text)

    monkeypatch.setattr(partial, "_TOKEN", Counting())
    for size in (3_000, 30_000):
        text = "x" * size
        raw = '{"query": "' + text + '"}'
        fragments = ['{"query": "'] + [text[i : i + 3] for i in range(0, size, 3)] + ['"}']
        point = eager_point(fragments, raw, ["query"])
        assert point is not None and point.fragment == 0 and point.seen == {"query": '""'}
    assert scans == [3_000 + 13, 30_000 + 13]  # one scan of each whole buffer, none per fragment


_TEXT = json_text(6)
_JSON = json_values(6, 3, 8)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_TEXT, _JSON, min_size=1, max_size=4), st.booleans(), st.data())
def test_top_level_values_are_what_json_reads_and_kept_fragments_place_the_same_point(
    value: dict[str, object], indent: bool, data: st.DataObject
) -> None:
    """Each key (escaped or not: ``"a\\"b"``, ``"\\u00e9"``) with the text of its value, as orjson reads the
    object; and the hazard found from a call's kept fragments (where each ends) is the one found
    from the same texts as a tuple."""
    raw = orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0).decode()
    values = top_level_values(raw)
    assert {key: orjson.loads(raw[start:end]) for key, (start, end) in values.items()} == value
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=4)))
    texts = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    required = data.draw(st.lists(st.sampled_from(sorted(value)), min_size=1, max_size=2, unique=True))
    kept = FragmentTexts.of(texts, raw)
    assert eager_point(kept, raw, required) == eager_point(tuple(texts), raw, required)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(_TEXT, _JSON, min_size=1, max_size=4),
    st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : "), (",\n  ", ":\t")]),
    st.data(),
)
def test_a_prefix_reads_each_member_it_holds_whole_as_the_whole_text_does(
    value: dict[str, object], separators: tuple[str, str], data: st.DataObject
) -> None:
    """A buffer cut anywhere (what a client holds mid-stream), whatever the spaces around commas and colons:
    every member whose value ended before the cut is read where the whole text reads it, and no key is read
    that the text does not hold. (The tokenizer reads a key with its colon, and with the comma before it.)"""
    raw = json.dumps(value, separators=separators, ensure_ascii=data.draw(st.booleans()))
    whole = top_level_values(raw)
    cut = data.draw(st.integers(0, len(raw)))
    found = top_level_values(raw[:cut])
    assert found.keys() <= whole.keys()
    for key, (start, end) in whole.items():
        if end < cut:
            assert found[key] == (start, end)
