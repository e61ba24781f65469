"""Where a ``Recorder`` writes its envelope: never over a file it did not write."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_doctor.capture import load
from stream_doctor.record import Recorder


def test_the_recorder_never_replaces_a_file_it_did_not_write(tmp_path: Path) -> None:
    """A user's file at the path is refused and kept; the near misses: the recorder's own envelope of a
    previous run is replaced, and so is anything when the caller says ``replace=True``."""
    mine = tmp_path / "notes.jsonl"
    mine.write_bytes(b'{"sd": "header", "source": "my own tool"}\n{"kept": true}\n')
    with pytest.raises(FileExistsError, match=r"notes\.jsonl: exists, and is not an envelope a Recorder wrote"):
        Recorder(mine)
    assert mine.read_bytes() == b'{"sd": "header", "source": "my own tool"}\n{"kept": true}\n'
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    with pytest.raises(FileExistsError):
        Recorder(folder)

    run = tmp_path / "run.envelope.jsonl"
    first = Recorder(run, note="first run")
    first.executed("toolu_1", "f", {})
    first.close()
    second = Recorder(run, note="second run")
    second.close()
    assert b"first run" not in run.read_bytes() and b"second run" in run.read_bytes()
    assert load(str(run)).frames == []

    forced = Recorder(mine, replace=True)
    forced.close()
    assert b"my own tool" not in mine.read_bytes()
