"""The text reports' renderer (reporters/_page.py): wrapping, cutting, tables, colours, as the reports use them.

The reports' look as a whole is in the snapshots (tests/__snapshots__); these pin what a user
sees at the edges: narrow terminals, long words, wide characters, tabs, and styles.
"""

from __future__ import annotations

import pytest
from rich.cells import cell_len, chop_cells

from stream_doctor.cli.output import render_options
from stream_doctor.reporters._page import Page, cells


def _plain(width: int) -> Page:
    return Page(width, colour=False)


def test_a_long_line_wraps_at_spaces_behind_its_indent() -> None:
    page = _plain(20)
    page.print("the buffer is not JSON; return an error", indent=4)
    assert page.text() == "    the buffer is \n    not JSON; return\n    an error\n"  # the space past the edge dropped


def test_a_word_longer_than_a_line_is_folded_from_a_line_of_its_own() -> None:
    page = _plain(10)
    page.print("id: " + "x" * 23)
    assert page.text().split("\n") == ["id: ", "x" * 10, "x" * 10, "xxx", ""]
    wide = _plain(5)
    wide.print("天天天天天")  # two cells each: two to a line, never half of one
    assert wide.text() == "天天\n天天\n天\n"


def test_a_cut_line_ends_with_an_ellipsis_in_the_style_it_replaces() -> None:
    page = Page(12, colour=True)
    page.print("1  get  ", ("unparseable", "bold red"), overflow="ellipsis")
    assert page.text() == "1  get  \x1b[1;31munp…\x1b[0m\n"
    unstyled = _plain(12)
    unstyled.print("input " + "{" * 40, indent=3, overflow="ellipsis")
    assert unstyled.text() == "   input {{…\n"


def test_overflow_none_leaves_a_row_whole() -> None:
    page = _plain(10)
    page.print("capture/one.sse  anthropic  3  passed", overflow="none")
    assert page.text() == "capture/one.sse  anthropic  3  passed\n"


def test_wide_characters_take_two_cells_and_tabs_reach_the_next_stop() -> None:
    assert cells("天気") == 4 and cells("é") == 1 and cells("e\u0301") == 1
    page = _plain(10)
    page.print("天気 天気 天気")
    assert page.text() == "天気 天気 \n天気\n"
    tabbed = _plain(40)
    tabbed.print("a\tbc\td")
    assert tabbed.text() == "a       bc      d\n"


#: Emoji sequences a terminal shows as one wide grapheme: ZWJ joins, skin tones, flags, VS16, keycaps.
SEQUENCES = [
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",  # family: man, ZWJ, woman, ZWJ, girl
    "\U0001f469\u200d\U0001f4bb",  # woman technologist
    "\U0001f3f3\ufe0f\u200d\U0001f308",  # rainbow flag: white flag, VS16, ZWJ, rainbow
    "\U0001f44d\U0001f3fd",  # thumbs up, medium skin tone
    "\U0001f9d1\U0001f3ff\u200d\U0001f4bb",  # technologist, dark skin tone, ZWJ, laptop
    "\u2764\ufe0f",  # heavy black heart, VS16 (one cell without it)
    "\u263a\ufe0f",  # smiling face, VS16
    "1\ufe0f\u20e3",  # keycap one
    "\U0001f600",  # a plain emoji
]
#: Flags: rich counts a regional indicator one cell and joins no pair, so a flag is two cells that a
#: fold may part; the renderer does as rich does (rich.cells.chop_cells), not as a grapheme splitter would.
FLAGS = ["\U0001f1fa\U0001f1f8", "\U0001f1ef\U0001f1f5"]  # US, JP


def test_every_code_point_below_u3000_is_as_wide_as_rich_counts_it() -> None:
    differing = {}
    for code in range(0x3000):
        char = chr(code)
        for text in (char, f"a{char}b", char * 3):
            if cells(text) != cell_len(text):
                differing[hex(code)] = (text, cells(text), cell_len(text))
    assert differing == {}


@pytest.mark.parametrize("sequence", SEQUENCES)
def test_an_emoji_sequence_is_as_wide_as_rich_counts_it_and_never_cut_inside(sequence: str) -> None:
    assert cells(sequence) == cell_len(sequence) == 2
    assert cells(f"id {sequence} x") == cell_len(f"id {sequence} x")
    page = _plain(5)
    page.print(sequence * 4)  # a word wider than the line: folded between sequences, two to a line
    assert page.text() == f"{sequence * 2}\n{sequence * 2}\n"
    assert page.text() == "".join(f"{line}\n" for line in chop_cells(sequence * 4, 5))
    for width, shown in [(5, f"ab{sequence}…"), (4, "ab …")]:  # a sequence that does not fit is dropped whole
        cut = _plain(width)
        cut.print(f"ab{sequence}{sequence}", overflow="ellipsis")
        assert cut.text() == f"{shown}\n"


@pytest.mark.parametrize("flag", FLAGS)
def test_a_flag_is_as_wide_as_rich_counts_it_and_folded_where_rich_folds_it(flag: str) -> None:
    assert cells(flag) == cell_len(flag) == 2
    page = _plain(5)
    page.print(flag * 4)
    assert page.text() == "".join(f"{line}\n" for line in chop_cells(flag * 4, 5))


def test_line_breaks_in_the_text_start_new_lines_under_the_same_indent() -> None:
    page = _plain(40)
    page.print('{\n  "a": 1\n}', indent=4)
    assert page.text() == '    {\n      "a": 1\n    }\n'


def test_styles_become_ansi_only_when_colour_is_on() -> None:
    spans = (("failed", "bold red"), " (--fail-on error)")
    coloured, plain = Page(80, colour=True), _plain(80)
    coloured.print(*spans)
    plain.print(*spans)
    assert coloured.text() == "\x1b[1;31mfailed\x1b[0m (--fail-on error)\n"
    assert plain.text() == "failed (--fail-on error)\n"
    whole = Page(80, colour=True)
    whole.print("input ", '{"q": 1}', style="dim")  # one style over every span of the line
    assert whole.text() == '\x1b[2minput {"q": 1}\x1b[0m\n'


def test_text_is_never_read_as_markup() -> None:
    page = Page(80, colour=True)
    page.print("[bold red]search[/] :warning:")
    assert page.text() == "[bold red]search[/] :warning:\n"
    with pytest.raises(ValueError, match="blink"):
        page.print(("x", "blink"))  # a style the renderer does not know is a bug, not plain text


def test_a_table_aligns_numbers_right_and_keeps_two_spaces_between_columns() -> None:
    page = _plain(80)
    page.table(["#", "line", "fragment"], [["1", "22", "''"], ["10", "7", "'{\"a\": 1}'"]], right=[True, True, False])
    assert page.text().split("\n") == [
        " #  line  fragment",
        " 1    22  ''",
        "10     7  '{\"a\": 1}'",
        "",
    ]


def test_a_table_wider_than_the_page_wraps_its_widest_column() -> None:
    page = _plain(24)
    page.table(["#", "fragment"], [["1", "'one two three four five six'"]], right=[True, False])
    assert page.text().split("\n") == [
        "#  fragment",
        "1  'one two three four",
        "   five six'",
        "",
    ]
    narrow = _plain(12)
    narrow.table(["#", "fragment"], [["1", "'" + "x" * 30 + "'"]], right=[True, False])
    assert narrow.text().split("\n")[1] == "1  'xxxxxxx…"  # a word wider than its column is cut


@pytest.mark.parametrize(
    ("env", "color", "expected"),
    [
        ({}, None, (None, 100)),  # not a terminal: plain, COLUMNS
        ({"FORCE_COLOR": "1"}, None, ("standard", 100)),
        ({"FORCE_COLOR": ""}, None, (None, 100)),
        ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, None, (None, 100)),
        ({"NO_COLOR": "1"}, True, ("standard", 100)),  # --color wins over NO_COLOR
        ({"FORCE_COLOR": "1"}, False, (None, 100)),  # --no-color wins over FORCE_COLOR
        ({"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"}, None, (None, 100)),
        ({"FORCE_COLOR": "1", "COLORTERM": "truecolor"}, None, ("truecolor", 100)),
        ({"FORCE_COLOR": "1", "TERM": "xterm-256color"}, None, ("256", 100)),
        ({"FORCE_COLOR": "1", "TERM": "dumb", "COLUMNS": ""}, None, (None, 80)),  # a dumb terminal: 80, no colour
        ({"COLUMNS": "0"}, None, (None, 80)),  # no width known: 80
    ],
)
def test_width_and_colour_come_from_the_flags_then_the_environment(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], color: bool | None, expected: tuple[str | None, int]
) -> None:
    for name in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "COLORTERM", "TERM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setattr("os.get_terminal_size", _no_terminal)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    options = render_options(None, color, max_rows=7)
    assert (options.color_system, options.width, options.max_rows) == (*expected, 7)
    assert render_options(33, color).width == 33  # --width wins over everything


def _no_terminal(descriptor: int = 1) -> object:
    raise OSError("not a terminal")


def test_counts_read_as_words_with_thousands_separators() -> None:
    from stream_doctor.reporters._text import counted

    assert counted(1, "event") == "1 event"
    assert counted(0, "event") == "0 events"
    assert counted(20_000, "error") == "20,000 errors"
    assert counted(3, "info", "info") == "3 info"
