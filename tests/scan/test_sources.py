"""How ``scan`` cuts its inputs into batches: no cluster needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_doctor.scan import ScanError
from stream_doctor.scan.sources import LINE_GRANULE, plan
from stream_doctor.values.command_options import ScanOptions


def _keys(batches) -> list[tuple[str, int | None]]:  # type: ignore[no-untyped-def]
    keys: list[tuple[str, int | None]] = []
    for batch in batches:
        keys += [(ref.label, None) for ref in batch.files]
        for segment in batch.segments:
            rows = range(segment.first_row, segment.first_row + segment.rows)
            keys += [(batch.table.label, r) for r in rows if batch.only is None or r in batch.only]
    return keys


def test_files_are_batched_by_count_hidden_folders_and_own_files_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for number in range(23):
        Path("logs/day1").mkdir(parents=True, exist_ok=True)
        Path(f"logs/day1/{number:02d}.sse").write_text("event: ping\ndata: {}\n\n")
    Path("logs/.cache").mkdir()
    Path("logs/.cache/hidden.sse").write_text("x")
    Path("logs/stream-doctor.toml").write_text("")
    Path("logs/day1/00.sse.expect.toml").write_text("")
    result = plan(ScanOptions(("logs",), batch_size=5), set(), workers=2)
    assert [b.count for b in result.batches] == [5, 5, 5, 5, 3]
    assert result.total == result.listed == 23
    assert _keys(result.batches)[0] == ("logs/day1/00.sse", None)
    assert all(not ref.named for b in result.batches for ref in b.files)
    # A file named on the command line is replayed whatever it holds.
    named = plan(ScanOptions(("logs/day1/03.sse",)), set(), workers=2)
    assert [ref.named for ref in named.batches[0].files] == [True]


def test_resume_and_sample_pick_rows_of_a_jsonl_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    rows = 3 * LINE_GRANULE + 5
    Path("t.jsonl").write_text("".join(f'{{"body": "{n}"}}\n' for n in range(rows)))
    options = ScanOptions(("t.jsonl",), body_column="body", batch_size=20)
    whole = plan(options, set(), workers=1)
    assert _keys(whole.batches) == [("t.jsonl", r) for r in range(rows)]
    assert whole.batches[-1].segments[-1].end == Path("t.jsonl").stat().st_size
    done = {("t.jsonl", r) for r in range(0, rows, 2)}
    resumed = plan(options, done, workers=1)
    assert _keys(resumed.batches) == [("t.jsonl", r) for r in range(1, rows, 2)]
    assert resumed.already == len(done) and resumed.total == rows - len(done)
    sampled = plan(ScanOptions(("t.jsonl",), body_column="body", sample=7, seed=3), set(), workers=1)
    again = plan(ScanOptions(("t.jsonl",), body_column="body", sample=7, seed=3), set(), workers=1)
    assert len(_keys(sampled.batches)) == sampled.total == 7 and _keys(sampled.batches) == _keys(again.batches)


def test_a_last_line_without_newline_is_a_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("t.jsonl").write_text('{"body": "a"}\n{"body": "b"}')
    assert plan(ScanOptions(("t.jsonl",), body_column="body"), set(), workers=1).total == 2


def test_inputs_that_name_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("empty").mkdir()
    with pytest.raises(ScanError, match="no captures found in empty"):
        plan(ScanOptions(("empty",)), set(), workers=1)
    with pytest.raises(ScanError, match=r"logs/\*\.sse: the pattern matches no file"):
        plan(ScanOptions(("logs/*.sse",)), set(), workers=1)
    with pytest.raises(ScanError, match="'\\*\\*' can only be an entire path component"):
        Path("empty/a.sse").write_text("x")
        plan(ScanOptions(("empty/**.sse",)), set(), workers=1)
    with pytest.raises(ScanError, match="nosuch://x: "):
        plan(ScanOptions(("nosuch://x",)), set(), workers=1)
