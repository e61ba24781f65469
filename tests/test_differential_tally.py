"""``python -m tests.differential_tally`` counts what the differential comparisons say, a row per subject
and source; here on the globs, whose comparison takes a moment (the others need libraries, Node or
Chromium, or scan every code point, and run in the long command itself)."""

from __future__ import annotations

from tests import differential_tally
from tests.differential_tally import Count, Table, render


def test_each_parser_row_counts_its_inputs_and_agreements() -> None:
    table = Table()
    differential_tally._globs(table, 5)
    assert "| globs vs pathspec | generated patterns | 5 | 5 | 0 | 0 |" in render(table, 5)
    patterns = table("parsers", "globs vs pathspec", "generated patterns")
    assert patterns.compared == patterns.agreeing == 5
    lines = table("parsers", "globs vs pathspec", "generated .gitignore")
    assert lines.compared == 5 and lines.agreeing + lines.listed == 5 and lines.unexplained == []


def test_a_library_disagreement_is_agreeing_listed_excused_or_unexplained() -> None:
    found = ["litellm by frame: profile a / library b", "openai-python cut at (3,): profile a / library c"]
    assert differential_tally._verdict("langchain", found) == "agree"
    assert differential_tally._verdict("litellm", found, listed=True) == "listed"
    assert differential_tally._verdict("openai-python", found, excused=True) == "excused"
    assert differential_tally._verdict("litellm", found) == "unexplained"
    # a client whose name begins another's is not taken for it
    assert differential_tally._verdict("openai", found) == "agree"


def test_unexplained_examples_are_shown_and_the_rest_counted() -> None:
    table = Table()
    count: Count = table("python", "litellm", "generated")
    count.add("agree")
    count.add("excused")
    for n in range(5):
        count.add("unexplained", f"stream {n}")
    text = render(table, 7)
    assert "| litellm | - | - | - | - | 1/7 | 1/7 | 0 | 5 |" in text
    assert "Pairs compared: 7, agreeing: 1, excused: 1, known divergences: 0, unexplained: 5." in text
    assert "stream 2" in text and "stream 3" not in text and "and 2 more for litellm (generated)" in text
