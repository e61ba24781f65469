"""``tests/client_run_tally.py``: a verdict is counted where its report says it came from (a run, fed the
original bytes or the frames written back, or the model with why), and the table adds them up."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from stream_doctor.clients import runs
from tests import client_run_tally

ONE_CALL = str(Path(__file__).resolve().parents[1] / "fixtures/anthropic/one_call.sse")


def test_a_library_that_did_not_answer_is_counted_as_its_model_with_why() -> None:
    kept = runs._start
    counts = client_run_tally.tally({ONE_CALL: "anthropic"}, {})  # no library answered
    assert runs._start is kept  # the engine's runs are its own again
    why = "model: the library could not be run (not answered by the pooled process); this is the model's answer"
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
