"""A capture is sniffed only by the readers it could be (``capture.candidates``), so a replay imports
those alone: the pre-filter must never leave out a reader whose ``sniff`` would have scored."""

from __future__ import annotations

import zlib
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_doctor.capture import HEAD_SIZE, READERS, candidates, sniff_scores
from tests.conftest import ROOT, corpus_files, fixture_files

FIXTURES = fixture_files(check_tree=True, notes=True, sidecars=True)
#: The real recorded captures beside the repository, when they are there (tests/test_conformance.py).

#: Starts of every shape a reader looks for, and near misses of them.
PIECES = [
    "\ufeff",
    " ",
    "\t",
    "\r\n",
    "\n",
    "\x0b",
    "\x0c",
    ":",
    ": ping",
    "event: x",
    "data: {}",
    "id: 1",
    "retry: 5",
    " data:",
    "{",
    "[",
    "]",
    "}",
    '{"log":',
    '{"sd":',
    '{"request":',
    '{"response":',
    '[{"scope":',
    '"scope"',
    "interactions:",
    "http_interactions:",
    "version: 1",
    "recorded_with: x",
    "---",
    "# comment",
    "requests:",
    "- body:",
    '{"interactions":',
    "0:",
    '0:"x"',
    "b:{}",
    "e:",
    "d:",
    "Z:",
    "9",
    "x",
    "\x00\x00\x00\x10",
]


def _assert_left_out_score_nothing(head: bytes) -> None:
    possible = set(candidates(head))
    for name, reader in READERS.items():
        if name not in possible:
            assert reader.sniff(head) == 0, (name, head[:80])
    scores = sniff_scores(head)
    assert list(scores) == list(READERS)
    assert all(scores[name] == READERS[name].sniff(head) for name in scores)


def test_every_fixture_and_corpus_head() -> None:
    assert len(FIXTURES) > 100
    for path in FIXTURES + corpus_files(notes=True):
        head = path.read_bytes()
        if head.startswith(b"\x1f\x8b"):
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, HEAD_SIZE)  # a cut gzip too
        _assert_left_out_score_nothing(head[:HEAD_SIZE])


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=8), st.binary(max_size=24))
def test_any_start_built_of_what_readers_look_for(pieces: list[str], tail: bytes) -> None:
    _assert_left_out_score_nothing("".join(pieces).encode() + tail)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_any_bytes(head: bytes) -> None:
    _assert_left_out_score_nothing(head)


def test_an_sse_capture_is_sniffed_by_two_readers() -> None:
    assert candidates(Path(ROOT / "fixtures" / "anthropic" / "one_call.sse").read_bytes()) == ["sse", "eventstream"]
