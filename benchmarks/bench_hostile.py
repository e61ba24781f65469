"""Hostile captures at full size: exit code, time, peak memory and the one line stream-doctor answers.

``tests/test_adversarial.py`` runs each attack scaled down to seconds; this script builds them at
the size they were first reported at (issue 14's table) and runs the CLI on each in a child process
under the default limits (1 GiB decompressed, 10 M frames), printing wall time, peak resident
memory (VmHWM of the process, or of its worker for ``check``) and the first line of standard error::

    .venv/bin/python benchmarks/bench_hostile.py             # every attack (a few minutes)
    .venv/bin/python benchmarks/bench_hostile.py --only yaml  # those whose name holds "yaml"

Every row should end with exit 2 (or 1 with an SD000 finding for ``check``), a bounded peak and no
traceback: the file never decides how much memory or time stream-doctor spends.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import os
import tempfile
import zlib
from functools import partial
from pathlib import Path
from typing import Callable

from bench_scale import run as run_cli
from captures import write_har_of_gzip_body

START = (
    b'{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],'
    b'"model":"claude","stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n'
)


def gzip_stream(path: Path, piece: bytes, total: int, head: bytes = b"") -> None:
    """``head`` then ``piece`` repeated up to ``total`` bytes, gzip-compressed as it is written."""
    block = piece * max(1, (8 << 20) // len(piece))
    with gzip.open(path, "wb", 9) as out:
        out.write(head)
        written = 0
        while written < total:
            out.write(block)
            written += len(block)


def pings_gz(path: Path) -> None:
    # the 1 MB .jsonl.gz of 33 M pings
    gzip_stream(path, b'{"type":"ping"}\n', 33_000_000 * 16, START)


def zeros_gz(path: Path) -> None:
    # 10 GiB of zeros, about 10 MB once compressed
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(64 << 20)
    with path.open("wb") as out:
        for _ in range(160):
            out.write(compressor.compress(zeros))
        out.write(compressor.flush())


def har_gzip_body(path: Path) -> None:
    # a HAR entry whose response body is 1 GiB of zeros gzip-compressed (base64 in content.text)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    body = b"".join(compressor.compress(bytes(64 << 20)) for _ in range(16)) + compressor.flush()
    write_har_of_gzip_body(path, body)


def _gzip_of(head: bytes, piece: bytes, total: int, tail: bytes) -> bytes:
    """``head``, ``piece`` repeated up to ``total`` bytes and ``tail``, gzip-compressed in memory a block at a time."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = piece * max(1, (8 << 20) // len(piece))
    parts = [compressor.compress(head)]
    for _ in range(total // len(block)):
        parts.append(compressor.compress(block))
    parts.append(compressor.compress(tail))
    return b"".join(parts) + compressor.flush()


def har_request_bodies(path: Path, entries: int = 2) -> None:
    # issue 22: HAR entries whose request bodies (postData, base64 gzip) each expand to 1000 MiB of JSON; each
    # is kept as a marker past 64 MiB (before the budget: exit 0 after 54.0 s at 5,042 MB; with it: 4.8 s, 95 MB)
    body = _gzip_of(b'{"model":"claude","messages":[{"role":"user","content":"', b"a", 1000 << 20, b'"}]}')
    sse = 'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    entry = {
        "request": {
            "method": "POST",
            "url": "https://api.anthropic.com/v1/messages",
            "headers": [{"name": "content-encoding", "value": "gzip"}],
            "postData": {"mimeType": "application/json", "text": base64.b64encode(body).decode(), "encoding": "base64"},
        },
        "response": {"status": 200, "headers": [], "content": {"mimeType": "text/event-stream", "text": sse}},
    }
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": [entry] * entries}}))


def binary_cassette(path: Path, size: int = 500_000_000) -> None:
    # issue 22: a Ruby VCR cassette whose response body is a 500 MB ``!binary`` scalar (base64 of SSE pings),
    # refused by its length (before: by the frame cap after 93.1 s at 4,801 MB; now: 20.3 s, 2,401 MB)
    ping = b'event: ping\ndata: {"type": "ping"}\n\n'
    line = 45 * 1000  # a multiple of 3 bytes: each block's base64 is whole 60-character lines
    block = (ping * (line // len(ping) + 1))[:line]
    encoded = base64.encodebytes(block).replace(b"\n", b"\n        ")
    with path.open("wb") as out:
        out.write(
            b"---\nhttp_interactions:\n- request:\n    method: post\n"
            b"    uri: https://api.anthropic.com/v1/messages\n    body:\n      encoding: UTF-8\n"
            b'      string: \'{"model":"claude","messages":[]}\'\n    headers: {}\n'
            b"  response:\n    status:\n      code: 200\n      message: OK\n    headers:\n      Content-Type:\n"
            b"      - text/event-stream\n    body:\n      encoding: ASCII-8BIT\n      string: !binary |-\n        "
        )
        for _ in range(size // line):
            out.write(encoded)
        out.write(b"\nrecorded_with: VCR 6.2.0\n")


def nested_cassette(path: Path) -> None:
    # 100 KB of YAML nested 50,000 deep (libyaml's composer recursed until the process crashed)
    depth = 50_000
    path.write_text("interactions:\n- request: " + "[" * depth + "]" * depth + "\n")


def yaml_bomb(path: Path) -> None:
    # one 500 KB string anchored once and aliased 100,000 times: about 1 MB on disk, 50 GB expanded
    rows = "".join("      - *a\n" for _ in range(100_000))
    path.write_text(
        "interactions:\n- request:\n    method: POST\n    uri: https://api.anthropic.com/v1/messages\n"
        f"    parsed_body:\n      model: &a {'x' * 500_000}\n      messages:\n{rows}  response: {{}}\n"
    )


def escapes_array(path: Path) -> None:
    # a 50 MB JSON array holding one string of \" escapes that never closes
    with path.open("wb") as out:
        out.write(b'[{"type":"x","text":"')
        block = b'\\"' * (1 << 20)
        for _ in range(25):
            out.write(block)


def many_calls(path: Path) -> None:
    # 100,000 tool calls of about 2 KB each in one 200 MB capture (bench_scale.py's shape)
    from captures import write_calls

    write_calls(path, 100_000)


# -- issue 31: small inputs that cost minutes or gigabytes ------------------------------------------------

SSE_START = b"event: message_start\ndata: " + START + b"\n"
SSE_PING = b'event: ping\ndata: {"type": "ping"}\n\n'


def _gzip_file(path: Path, head: bytes, piece: bytes, total: int, tail: bytes) -> None:
    path.write_bytes(_gzip_of(head, piece, total, tail))


def sse_comments_gz(path: Path) -> None:
    # a 2 MB gzip of 900 MiB of keep-alive comments without blank lines (before: 116 s, then a MemoryError at 7.9 GB)
    _gzip_file(path, SSE_START, b": keep-alive\n", 900 << 20, SSE_PING)


def sse_comments_in_event_gz(path: Path, line: bytes = b":\n") -> None:
    # the same inside one event, after its event: line (before: 100 MiB of them took 80 s and 2.7 GB; 900 MiB
    # a MemoryError), and with CR line ends (CR blank lines: 10 MiB took 41 s and 1.2 GB)
    _gzip_file(path, SSE_START + b"event: ping\n", line, 900 << 20, b'data: {"type": "ping"}\n\n')


def sse_unknown_fields_in_event_gz(path: Path) -> None:
    # 100 MiB of unknown field lines inside one event, after its event: line (before: 32 MiB took 753 MB)
    _gzip_file(path, SSE_START + b"event: ping\n", b"f: x\n", 100 << 20, b'data: {"type": "ping"}\n\n')


def sse_unknown_fields_after_brace_gz(path: Path) -> None:
    # the same after a line "{" (maybe a JSON body without data: prefixes), ended by a blank line (before: 32 MiB
    # took 2.75 GB and 18 s CPU, every line held as the body)
    _gzip_file(path, SSE_START + b"{\n", b"f: x\n", 100 << 20, b"\n" + SSE_PING)


def sse_blank_lines_gz(path: Path) -> None:
    # a 1 MB gzip of 1000 MiB of blank lines (before: 4.2 s per MiB, about 70 minutes)
    _gzip_file(path, SSE_START, b"\n", 1000 << 20, SSE_PING)


def jsonl_blank_lines_gz(path: Path) -> None:
    # the same for JSON Lines, lines of two spaces (before: over 200 s for 100 MiB)
    _gzip_file(path, START, b"  \n", 1000 << 20, b'{"type":"ping"}\n')


def sse_unknown_fields(path: Path) -> None:
    # 500,000 distinct unknown field names in 5 MB (before: 500,010 findings, 327 MB)
    names = b"".join(b"f%d: x\n" % number for number in range(500_000))
    path.write_bytes(SSE_START + names + b"\n" + SSE_PING)


def har_gzip_comments(path: Path, size: int = 200 << 20) -> None:
    # a HAR entry whose gzip body is 200 MiB of comments before an event (before: decoded whole and split
    # line by line, 5.6+ GB); now over the per-body limit (1/8 of --max-bytes): exit 2, one line. Its near
    # miss, 120 MiB, is decoded and read a piece at a time
    body = _gzip_of(SSE_START, b":\n", size, SSE_PING)
    write_har_of_gzip_body(path, body)


def _check_folder(path: Path, name: str, text: str) -> None:
    path.mkdir()
    (path / ".git").mkdir()
    (path / name).write_text(text)
    for number in range(20):
        (path / f"capture{number}.sse").write_bytes(SSE_START + SSE_PING)


def gitignore_stars(path: Path) -> None:
    # a .gitignore line of 10,000 stars and an x (before: 91 s, then a MemoryError)
    _check_folder(path, ".gitignore", "*" * 10_000 + "x\n")


def per_file_ignores_stars(path: Path) -> None:
    # a per-file-ignores glob of 10,000 stars (before: 43 s, 1.19 GB)
    _check_folder(path, "pyproject.toml", f'[tool.stream-doctor.per-file-ignores]\n"{"*" * 10_000}" = ["SD201"]\n')


def table_of_a_huge_id(path: Path) -> None:
    # one table row whose id and metadata are 400 MiB each (copied into every row the client builds)
    import pyarrow as pa
    import pyarrow.parquet as pq

    huge = "x" * (400 << 20)
    pq.write_table(pa.table({"body": [(SSE_START + SSE_PING).decode()], "id": [huge], "note": [huge]}), path)


ATTACKS: dict[str, tuple[str, Callable[[Path], None] | None, list[str]]] = {
    "gzip of 33 M pings": ("pings.jsonl.gz", pings_gz, ["replay", "{}"]),
    "gzip of 10 GiB of zeros": ("zeros.gz", zeros_gz, ["replay", "{}"]),
    "HAR with a 1 GiB gzip body": ("bomb.har", har_gzip_body, ["replay", "{}"]),
    "HAR, 2 request bodies of 1000 MiB (gzip)": ("requests.har", har_request_bodies, ["replay", "{}"]),
    "cassette with a 500 MB !binary body": ("binary.yaml", binary_cassette, ["replay", "{}"]),
    "YAML nested 50,000 deep": ("nested.yaml", nested_cassette, ["replay", "{}"]),
    "YAML nested 50,000 deep, check --jobs 2": ("nested.yaml", nested_cassette, ["check", "--jobs", "2", "{}"]),
    "YAML bomb of one aliased string": ("bomb.yaml", yaml_bomb, ["replay", "{}"]),
    "JSON array, unclosed string of escapes": ("escapes.json", escapes_array, ["replay", "{}"]),
    "/dev/zero": ("", None, ["replay", "/dev/zero"]),
    "/dev/urandom": ("", None, ["replay", "/dev/urandom"]),
    "a FIFO": ("fifo", None, ["replay", "{}"]),
    "convert onto its own input": ("same.sse", None, ["convert", "{}", "-o", "{}"]),
    "100,000 calls, check": ("calls.sse", many_calls, ["check", "--isolated", "{}"]),
    "100,000 calls, replay": ("calls.sse", many_calls, ["replay", "--width", "100", "{}"]),
    "gzip of 900 MiB of SSE comments": ("comments.sse.gz", sse_comments_gz, ["replay", "{}"]),
    "gzip of 900 MiB of comments in an event": ("inside.sse.gz", sse_comments_in_event_gz, ["replay", "{}"]),
    "gzip of 900 MiB of CR comments in an event": (
        "inside-cr.sse.gz",
        partial(sse_comments_in_event_gz, line=b":\r"),
        ["replay", "{}"],
    ),
    "gzip of 100 MiB of unknown fields in an event": (
        "fields.sse.gz",
        sse_unknown_fields_in_event_gz,
        ["replay", "{}"],
    ),
    "gzip of 100 MiB of unknown fields after {": (
        "brace.sse.gz",
        sse_unknown_fields_after_brace_gz,
        ["replay", "{}"],
    ),
    "gzip of 1000 MiB of blank SSE lines": ("blank.sse.gz", sse_blank_lines_gz, ["replay", "{}"]),
    "gzip of 1000 MiB of blank JSON lines": ("blank.jsonl.gz", jsonl_blank_lines_gz, ["replay", "{}"]),
    "HAR with a gzip body of 200 MiB of SSE comments": ("comments.har", har_gzip_comments, ["replay", "{}"]),
    "HAR with a gzip body of 120 MiB of SSE comments (read)": (
        "comments120.har",
        partial(har_gzip_comments, size=120 << 20),
        ["replay", "{}"],
    ),
    "500,000 unknown SSE field names": ("fields.sse", sse_unknown_fields, ["replay", "{}"]),
    ".gitignore of 10,000 stars, check": ("gitignore", gitignore_stars, ["check", "{}"]),
    "per-file-ignores of 10,000 stars, check": ("ignores", per_file_ignores_stars, ["check", "{}"]),
    "scan, a row with a 400 MiB id and note": (
        "huge_id.parquet",
        table_of_a_huge_id,
        ["scan", "{}", "--body-column", "body", "--id-column", "id", "--meta-column", "note", "--workers", "1"],
    ),
}


def run(args: list[str], cwd: Path) -> tuple[float, int, int, str]:
    """Wall seconds, peak RSS in MB, exit code and first line of standard error of the CLI run."""
    elapsed, megabytes, code, error = run_cli(args, cwd, timeout=900)
    lines = error.strip().splitlines()
    first = lines[0] if lines else ""
    if "Traceback" in error:
        first = "TRACEBACK: " + lines[-1]
    return elapsed, megabytes, code, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=[], help="run only the attacks whose name holds one of these")
    options = parser.parse_args()
    print(f"{'attack':<42} {'file':>9} {'exit':>4} {'time':>7} {'peak':>8}  first line of stderr")
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        for name, (file_name, build, args) in ATTACKS.items():
            if options.only and not any(wanted in name for wanted in options.only):
                continue
            path = where / file_name if file_name else None
            if path is not None and not path.exists():
                if build is not None:
                    build(path)
                elif file_name == "fifo":
                    os.mkfifo(path)
                else:
                    path.write_bytes(b'event: ping\ndata: {"type": "ping"}\n\n')
            size = f"{path.stat().st_size / 1e6:.1f} MB" if path is not None and path.is_file() else "-"
            argv = [a.format(path) for a in args]
            elapsed, peak, code, first = run(argv, where)
            shown = first.replace(str(where) + "/", "")
            print(f"{name:<42} {size:>9} {code:>4} {elapsed:6.1f}s {peak:>5,} MB  {shown[:110]}", flush=True)


if __name__ == "__main__":
    main()
