"""PartialJson agrees with the partial parse the pinned SDKs report (``jiter.from_json(buffer,
partial_mode=True)``, anthropic ``accumulate_event`` and openai-python ``ChatCompletionStreamState``)
at every point of a growing buffer, and tells a snapshot that differs from it."""

from __future__ import annotations

import random

import pytest
from jiter import from_json  # what anthropic==2.12.0 and openai==3.54.0 (the test extra) parse with

from stream_doctor.accumulate.partial_json import PartialJson

DOCUMENTS = [
    '{"customer_email": "dana.whitfield@example.com", "status": "shipped", "limit": 5}',
    '{"a": [1, 2.5, -3e2, {"b": "x\\"y\\\\z\\u00e9\\ud83d\\ude00"}, [], {}], "c": {"d": {"e": [true, false, null]}}}',
    '[1, "two", [3, [4, [5]]], {"k": {"l": []}}, -0.5, 1E+5, 2e-3]',
    '  {"x" : 12345678901234 , "y" : -0.000123 , "z":[ ] , "w": ""}  ',
    '{"emoji": "😀 ünïcode", "path": "C:\\\\tmp\\\\a.txt", "newline": "a\\nb"}',
    '{"nested": {"deep": {"deeper": {"deepest": "v"}}}, "after": 10}',
    "12.5",
    "[]",
]


def _splits(document: str) -> list[list[str]]:
    """Every character on its own, and a few random cuttings (fixed seed)."""
    rnd = random.Random(document)
    out = [list(document)]
    for _ in range(5):
        cuts = sorted(rnd.sample(range(1, len(document)), min(len(document) - 1, rnd.randrange(1, 8))))
        out.append([document[a:b] for a, b in zip([0, *cuts], [*cuts, len(document)], strict=True)])
    return out


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_prefix_matches_the_sdks_partial_parse(document: str) -> None:
    for fragments in _splits(document):
        model, buffer, verdicts = PartialJson(), "", []
        for fragment in fragments:
            model.feed(fragment)
            buffer += fragment
            try:
                parsed = from_json(buffer.encode(), partial_mode=True)
            except ValueError:
                continue  # the SDK raises here: the helper reports nothing
            verdict = model.matches(parsed)
            assert verdict is not False, (buffer, parsed)
            verdicts.append(verdict)
        # a verdict at every point the SDK parsed (not a model that never decides)
        assert verdicts and all(verdicts), (document, verdicts)


def _fed(*fragments: str) -> PartialJson:
    model = PartialJson()
    for fragment in fragments:
        model.feed(fragment)
    return model


def test_unfinished_string_is_not_part_of_the_snapshot() -> None:
    # jiter's "on" mode, not "trailing-strings": {"state": "op is {} to the SDKs
    assert _fed('{"state": "op').matches({}) is True
    assert _fed('{"state": "op').matches({"state": "op"}) is False


def test_trailing_number_counts_once_it_is_valid() -> None:
    assert _fed('{"limit": 1').matches({"limit": 1}) is True
    assert _fed('{"limit": 1', "2").matches({"limit": 12}) is True
    assert _fed('{"limit": 1.').matches({}) is True
    assert _fed('{"limit": 1.').matches({"limit": 1}) is False


def test_a_newly_completed_value_that_differs_is_told() -> None:
    model = _fed('{"labels": ["bug"')
    assert model.matches({"labels": ["bug"]}) is True
    model.feed(', "ui"')
    assert model.matches({"labels": ["bug", "UI"]}) is False


def test_a_missing_or_extra_key_is_told() -> None:
    model = _fed('{"a": 1, "b": [')
    assert model.matches({"a": 1}) is False
    assert _fed('{"a": 1, "b": [').matches({"a": 1, "b": [], "c": 2}) is False
    assert _fed('{"a": 1, "b": [').matches({"a": 1, "b": {}}) is False


@pytest.mark.parametrize("text", ['{"a": NaN', '{"a": 1, "a": 2', '{"a": 1}x', '{"a" 1', '{"a": tru e', ""])
def test_no_verdict_where_the_sdks_answer_is_not_certain(text: str) -> None:
    assert _fed(text).matches({"a": 1}) is None


class _Counted(int):
    """An int that counts how often a comparison looks at it."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _Counted.compared += 1
        return int(self) == other

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = int.__hash__


def test_each_completed_value_is_compared_once_over_the_whole_log() -> None:
    # A list of n numbers, one fragment each, a snapshot after every fragment (as the helpers log):
    # comparing every snapshot whole would look at n*n/2 values; the model looks at each once, plus
    # the trailing number still being read.
    n = 400
    model, _Counted.compared = _fed("["), 0
    for i in range(n):
        model.feed(f"{i},")
        snapshot = [_Counted(k) for k in range(i + 1)]
        assert model.matches(snapshot) is True
    assert _Counted.compared <= 2 * n
