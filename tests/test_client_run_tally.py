"""``tests/client_run_tally.py``: a verdict is counted where its report says it came from (a run, fed the
original bytes or the frames written back, or the model with why), and the table adds them up."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from stream_doctor.clients import runs
from tests import client_run_tally
from tests.clients.test_client_runs import _stand_in

ONE_CALL = str(Path(__file__).resolve().parents[1] / "fixtures/anthropic/one_call.sse")


def test_a_library_that_did_not_answer_is_counted_as_its_model_with_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stand_in(tmp_path, monkeypatch, "anthropic", "import time\ntime.sleep(600)\n")
    monkeypatch.setattr(runs, "RUN_SECONDS", 3.0)
    counts = client_run_tally.tally({ONE_CALL: "anthropic"}, "anthropic-python,openai-python")
    why = "model: the library could not be run (no answer within 3 s: stopped); this is the model's answer"
    assert counts["anthropic-python"] == Counter({why: 1})
    assert counts["openai-python"] == Counter()  # it does not read Anthropic's stream


def test_the_table_adds_runs_and_models() -> None:
    counts = {"a": Counter({"run": 3, "run, written back": 1, "model: not installed": 2}), "b": Counter({"run": 1})}
    rows = client_run_tally.table("t", counts).splitlines()
    assert rows[4:] == [
        "| a | 6 | 4 | 1 | 2 | not installed (2) |",
        "| b | 1 | 1 | 0 | 0 | - |",
        "| **all** | 7 | 5 | | 2 | |",
    ]
