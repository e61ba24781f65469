"""Small inputs stay small (issue 31): a few kilobytes of patterns, blank lines, comments or field
names never cost minutes or gigabytes. Each attack runs scaled down to seconds in a subprocess under
an address-space limit (``test_adversarial.run_cli``), beside a near miss that must still be read;
``benchmarks/bench_hostile.py`` runs them at full size.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.test_adversarial import PEAK_BOUND_KB, run_cli

#: each attack run by the CLI in a subprocess under an address-space limit
pytestmark = [pytest.mark.slow]

STARS = "*" * 10_000


def _captures(folder: Path) -> None:
    """Two captures with an error each: ``duplicate_tool_ids.sse`` and ``keep.sse`` (SD405)."""
    body = (ROOT / "fixtures/anthropic/duplicate_tool_ids.sse").read_bytes()
    (folder / "duplicate_tool_ids.sse").write_bytes(body)
    (folder / "keep.sse").write_bytes(body)


def test_a_gitignore_line_of_ten_thousand_stars_is_read_in_bounded_memory(tmp_path: Path) -> None:
    # issue 31: "*" * 10_000 + "x" took 91 s and then a MemoryError (nested loops, one per star)
    (tmp_path / ".git").mkdir()
    _captures(tmp_path)
    (tmp_path / ".gitignore").write_text(f"{STARS}s.sse\n{STARS}q.sse\n")
    ran = run_cli("check", ".", cwd=tmp_path)
    assert ran.code == 1, ran.out + ran.err
    assert "keep.sse" in ran.out  # the near miss: "…q.sse" ignores neither file, "…s.sse" one of them
    assert "duplicate_tool_ids.sse" not in ran.out
    assert ran.peak_kb < PEAK_BOUND_KB


def test_a_per_file_ignores_glob_of_ten_thousand_stars_is_read_in_bounded_memory(tmp_path: Path) -> None:
    # issue 31: 43 s and 1.19 GB for a glob of 10,000 stars
    _captures(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.stream-doctor.per-file-ignores]\n"{STARS}ids.sse" = ["SD405"]\n"{STARS}nothing.sse" = ["SD405"]\n'
    )
    ran = run_cli("check", ".", "-r", "github", cwd=tmp_path)
    assert ran.code == 1, ran.out + ran.err
    assert "keep.sse" in ran.out and "SD405" in ran.out  # the near miss: still reported
    assert "duplicate_tool_ids.sse" not in ran.out  # its SD405 is ignored
    assert ran.peak_kb < PEAK_BOUND_KB


# ---------------------------------------------------------------------------------------------------- SSE lines

START = b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
PING = b'event: ping\ndata: {"type": "ping"}\n\n'


def _gzip_of(path: Path, head: bytes, line: bytes, size: int, tail: bytes) -> Path:
    """``head``, ``line`` repeated to ``size`` bytes and ``tail``, gzip-compressed a block at a time."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = line * ((1 << 20) // len(line))
    with path.open("wb") as out:
        out.write(compressor.compress(head))
        for _ in range(size // len(block)):
            out.write(compressor.compress(block))
        out.write(compressor.compress(tail) + compressor.flush())
    return path


def _replayed(path: Path) -> tuple[int, dict[str, Any]]:
    ran = run_cli("replay", str(path), "-f", "json")
    return ran.peak_kb, json.loads(ran.out)


@pytest.mark.parametrize(
    ("line", "comments"),
    [(b":\n", True), (b": keep-alive\n", True), (b": ping\n\n", True), (b"\n", False), (b"\r\n", False)],
    ids=["colons", "keep-alives", "keep-alives-and-blank-lines", "blank-lines", "blank-crlf"],
)
def test_a_small_gzip_of_comments_or_blank_lines_reads_in_bounded_memory(
    tmp_path: Path, line: bytes, comments: bool
) -> None:
    # issue 31: a 2.2 MB gzip of 900 MiB of comments took 5.9 GB (MemoryError); blank lines 4.2 s per MiB.
    # Here 64 MiB (1.6 GB before for the colons; about 4.5 minutes for the blank lines); the event after
    # them is the near miss, still read.
    path = _gzip_of(tmp_path / "quiet.sse.gz", START, line, 64 << 20, PING)
    peak_kb, report = _replayed(path)
    assert report["capture"]["events"] == 2 and report["capture"]["ended_cleanly"]
    assert report["event_counts"]["ping"] == 1
    assert peak_kb < PEAK_BOUND_KB


def test_a_comment_flood_inside_an_event_is_still_that_event(tmp_path: Path) -> None:
    # the near miss of the cut after comment runs: comments after an event's first field are inside it
    flood = b":\n" * 100_000
    path = tmp_path / "inside.sse"
    path.write_bytes(START + b"event: ping\n" + flood + b'data: {"type": "ping"}\n' + flood + b"\n")
    peak_kb, report = _replayed(path)
    assert report["capture"]["events"] == 2 and report["event_counts"]["ping"] == 1
    assert peak_kb < PEAK_BOUND_KB


@pytest.mark.parametrize("line", [b":\n", b": keep-alive\r\n", b":\r"], ids=["colons", "crlf", "cr"])
def test_a_small_gzip_of_comments_inside_one_event_reads_in_bounded_memory(tmp_path: Path, line: bytes) -> None:
    # issue 31: "event: ping" and 100 MiB of comments (a 2 MB gzip) peaked at 2.8 GB, 900 MiB ran out of
    # memory: the cut after comment lines was between events only. 64 MiB here (1.7 GB before).
    path = _gzip_of(tmp_path / "inside.sse.gz", START + b"event: ping\n", line, 64 << 20, b"")
    peak_kb, report = _replayed(path)
    assert report["capture"]["events"] == 1 and not report["capture"]["ended_cleanly"]
    lines = 4 + 64 * ((1 << 20) // len(line))  # _gzip_of writes 64 blocks of a MiB's worth of whole lines
    cut = next(f for f in report["findings"] if f["code"] == "SD003")
    assert f"the capture ends after line {lines}, inside an event whose data never arrived" in cut["message"]
    assert peak_kb < PEAK_BOUND_KB


def test_an_event_after_a_comment_flood_inside_it_keeps_its_data_and_every_position(tmp_path: Path) -> None:
    # the near miss: the event the flood is inside still reads, and what follows it is where it was
    flood = b":\n" * (8 << 20)
    after = START + b"event: ping\n" + flood + b'data: {"type": "ping"}\n'
    path = _gzip_of(tmp_path / "near.sse.gz", after + b"x-extra: 1\n", b": k\n", 8 << 20, b"\ndata: {oops\n\n")
    peak_kb, report = _replayed(path)
    assert report["event_counts"]["ping"] == 1
    extra, frame = ([f["location"] for f in report["findings"] if f["code"] == code][0] for code in ("SD005", "SD001"))
    assert extra == {"path": str(path), "line": 4 + (8 << 20) + 2, "event": 2, "offset": len(after)}
    lines, size = 4 + (8 << 20) + 3 + (2 << 20) + 1, len(after) + 11 + (8 << 20) + 1
    assert frame == {"path": str(path), "line": lines, "event": 3, "offset": size}
    assert peak_kb < PEAK_BOUND_KB


def test_a_small_gzip_of_unknown_fields_inside_one_event_reads_in_bounded_memory(tmp_path: Path) -> None:
    # issue 31: "event: ping" and 32 MiB of "f: x" lines peaked at 753 MB: no cut was made after unknown
    # field lines, so the event was gathered whole. 16 MiB here (about 380 MB before).
    path = _gzip_of(tmp_path / "fields.sse.gz", START + b"event: ping\n", b"f: x\n", 16 << 20, b"")
    peak_kb, report = _replayed(path)
    assert report["capture"]["events"] == 1 and not report["capture"]["ended_cleanly"]
    lines = 4 + 16 * ((1 << 20) // 5)
    cut = next(f for f in report["findings"] if f["code"] == "SD003")
    assert f"the capture ends after line {lines}, inside an event whose data never arrived" in cut["message"]
    unknown = [f["location"] for f in report["findings"] if f["code"] == "SD005"]
    assert unknown == [{"path": str(path), "line": 5, "event": 2, "offset": len(START) + 12}]  # told once
    assert peak_kb < PEAK_BOUND_KB


def test_an_event_after_an_unknown_field_flood_inside_it_keeps_its_data_and_every_position(tmp_path: Path) -> None:
    # the near miss: the event the flood is inside still reads, its unknown fields are told where they are
    # (eleven names: ten one by one, then the summary at the first line past them), and what follows is
    # where it was
    head = START + b"event: ping\n" + b"".join(b"x%d: 1\n" % n for n in range(11))
    flood = b"f: x\n" * 200_000
    before_data = head + flood
    before_oops = before_data + b'data: {"type": "ping"}\n' + flood + b"\n"
    path = tmp_path / "near.sse"
    path.write_bytes(before_oops + b"data: {oops\n\n")
    peak_kb, report = _replayed(path)
    assert report["event_counts"]["ping"] == 1
    unknown = [f for f in report["findings"] if f["code"] == "SD005"]
    where = [(f["location"]["line"], f["location"]["offset"], f["location"]["event"]) for f in unknown]
    firsts = [(5 + n, len(START) + 12 + sum(len(b"x%d: 1\n" % k) for k in range(n)), 2) for n in range(10)]
    assert where == [*firsts, (15, len(START) + 12 + 6 * 10, 2)]
    assert unknown[-1]["message"].startswith("400,001 more lines of unknown SSE fields, 2 other names")
    frame = next(f["location"] for f in report["findings"] if f["code"] == "SD001")
    assert frame == {"path": str(path), "line": before_oops.count(b"\n") + 1, "event": 3, "offset": len(before_oops)}
    assert peak_kb < PEAK_BOUND_KB


def test_an_unknown_field_flood_after_a_brace_reads_in_bounded_memory(tmp_path: Path) -> None:
    # issue 31: an event whose first line starts with "{" (maybe a JSON body without data: prefixes) held
    # every line after it: "{" and 32 MiB of "f: x" lines peaked at 2.75 GB (22.6 s); 16 MiB here (1.4 GB
    # before). The near miss after it: a JSON error body over six lines, still one frame, as google-genai reads it.
    error = b'{\n  "error": {\n    "code": 499,\n    "message": "x"\n  }\n}\n\n'
    path = _gzip_of(tmp_path / "brace.sse.gz", START + b"{\n", b"f: x\n", 16 << 20, b"\n" + error + PING)
    peak_kb, report = _replayed(path)
    assert report["capture"]["events"] == 3 and report["event_counts"]["ping"] == 1
    unknown = [(f["location"]["line"], f["location"]["offset"]) for f in report["findings"] if f["code"] == "SD005"]
    lines = 5 + 16 * ((1 << 20) // 5) + 1  # the error body's first line, after the flood and its blank line
    size = len(START) + 2 + 16 * ((1 << 20) // 5) * 5 + 1
    assert unknown == [(4, len(START)), (5, len(START) + 2), (lines, size)]  # "{", "f", then the body's framing
    body = next(f for f in report["findings"] if f["code"] == "SD005" and f["location"]["line"] == lines)
    assert body["message"].startswith(f"lines {lines}-{lines + 5} are a JSON object written without data: prefixes")
    assert peak_kb < PEAK_BOUND_KB


def test_many_distinct_unknown_field_names_are_eleven_findings(tmp_path: Path) -> None:
    # issue 31: 500,000 distinct names in 4.4 MB were 500,002 findings and 325 MB
    names = b"".join(b"f%d: x\n" % number for number in range(200_000))
    path = tmp_path / "fields.sse"
    path.write_bytes(START + names + b"\n" + PING)
    peak_kb, report = _replayed(path)
    unknown = [f for f in report["findings"] if f["code"] == "SD005"]
    assert len(unknown) == 11
    assert unknown[-1]["message"].startswith("199,990 more lines of unknown SSE fields, more than 1,000 other names")
    assert report["event_counts"]["ping"] == 1  # the event after them: read
    assert peak_kb < PEAK_BOUND_KB


def test_a_small_gzip_of_blank_json_lines_reads_in_seconds(tmp_path: Path) -> None:
    # issue 31's row, for the other line-based reader: each blank line was a step of Python and each
    # line of spaces a JSON error caught (100 MiB gzipped: 71 s; of "  \n": over 200 s); 64 MiB here
    head = START.split(b"\n")[1].removeprefix(b"data: ") + b"\n"
    path = _gzip_of(tmp_path / "blank.jsonl.gz", head, b"  \n", 64 << 20, b'{"type": "ping"}\n')
    peak_kb, report = _replayed(path)
    assert report["capture"]["container"] == "jsonl" and report["capture"]["events"] == 2
    assert report["event_counts"]["ping"] == 1  # the near miss: the line after them is read
    assert peak_kb < PEAK_BOUND_KB


# ---------------------------------------------------------------------------------------------------- HAR bodies


def _har_of_gzip_body(path: Path, size: int) -> Path:
    """A HAR entry whose response body is ``size`` bytes of comments between two events, stored gzip-compressed."""
    from benchmarks.captures import write_har_of_gzip_body

    write_har_of_gzip_body(path, _gzip_of(path.with_suffix(".gz"), START, b":\n", size, PING).read_bytes())
    return path


def test_a_gzip_body_in_a_har_file_over_an_eighth_of_the_byte_cap_is_refused(tmp_path: Path) -> None:
    # issue 31: a body stored compressed is decoded whole, within the 1 GiB budget (200 MiB of comments
    # peaked at 441 MB); one body may now make 1/8 of --max-bytes, here 32 MiB of 256 MiB
    path = _har_of_gzip_body(tmp_path / "over.har", 33 << 20)
    ran = run_cli("replay", str(path), "--max-bytes", "256M")
    assert ran.code == 2, ran.out + ran.err
    assert ran.error_line.endswith(
        "a compressed body in the capture is larger than 32 MiB once decoded, the limit for one body"
        " (1/8 of --max-bytes; raise it with --max-bytes)"
    )
    assert ran.peak_kb < PEAK_BOUND_KB
    # the near miss: 31 MiB is decoded and read, its events and all
    near = _har_of_gzip_body(tmp_path / "under.har", 31 << 20)
    read = run_cli("replay", str(near), "--max-bytes", "256M", "-f", "json")
    assert read.code in (0, 1), read.err
    report = json.loads(read.out)
    assert report["event_counts"]["ping"] == 1
    assert read.peak_kb < PEAK_BOUND_KB
