"""``scan`` on hostile inputs and outputs: a corrupt table among good ones, a tampered ``--resume`` status table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stream_doctor.scan.run import scan
from stream_doctor.values.command_options import ScanOptions
from tests.conftest import FIXTURES
from tests.scan.conftest import status_rows

#: a real Dask cluster; the CLI in a subprocess under an address-space limit
pytestmark = [pytest.mark.external, pytest.mark.slow]

BODIES = ["anthropic/one_call.sse", "anthropic/abandoned_at_max_tokens.sse", "openai/one_call.sse"]


def _write_table(path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    bodies = [(FIXTURES / name).read_text(encoding="utf-8") for name in BODIES]
    pq.write_table(pa.table({"body": bodies}), path, row_group_size=2)


def _corrupt_footer(path: Path) -> None:
    """The footer's metadata overwritten with junk (the length and the closing ``PAR1`` kept)."""
    data = bytearray(path.read_bytes())
    length = int.from_bytes(data[-8:-4], "little")
    data[-8 - length : -8] = b"\xff" * length
    path.write_bytes(bytes(data))


def test_a_table_with_a_corrupt_footer_is_one_status_row_and_the_others_are_scanned(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("tables").mkdir()
    for name in ("a.parquet", "b.parquet", "c.parquet"):
        _write_table(Path("tables", name))
    _corrupt_footer(Path("tables/b.parquet"))
    result = scan(ScanOptions(("tables",), out="f.parquet", body_column="body", scheduler=cluster))

    rows = status_rows("f.status.parquet")
    keys = sorted((r["source"], r["row"] if r["row"] is not None else -1) for r in rows)
    assert keys == [("tables/a.parquet", 0), ("tables/a.parquet", 1), ("tables/a.parquet", 2), ("tables/b.parquet", -1),
                    ("tables/c.parquet", 0), ("tables/c.parquet", 1), ("tables/c.parquet", 2)]  # fmt: skip
    (broken,) = [r for r in rows if r["source"] == "tables/b.parquet"]
    assert broken["status"] == "unreadable" and broken["codes"] == ["SD000"]
    assert broken["error"].startswith("not a readable Parquet table: ") and "\n" not in broken["error"]
    assert {r["status"] for r in rows if r["source"] != "tables/b.parquet"} <= {"passed", "findings"}
    assert result.scanned == result.plan.total == 7
    assert result.summary.statuses["unreadable"] == 1

    # --resume keeps the broken table's row and scans nothing again; a repaired table is scanned
    again = scan(ScanOptions(("tables",), out="f.parquet", body_column="body", scheduler=cluster, resume=True))
    assert again.plan.already == 7 and again.scanned == 0 and again.plan.ignored == 0
    _write_table(Path("tables/b.parquet"))
    repaired = scan(ScanOptions(("tables",), out="f.parquet", body_column="body", scheduler=cluster, resume=True))
    assert repaired.scanned == 3 and repaired.plan.ignored == 1  # the table's old row names no capture now
    rows = status_rows("f.status.parquet")
    assert len(rows) == 9 and all(r["row"] is not None for r in rows)  # the old table row: not in the input now


def test_a_good_table_alone_has_no_table_row(cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _write_table(Path("a.parquet"))
    scan(ScanOptions(("a.parquet",), out="f.parquet", body_column="body", scheduler=cluster))
    assert sorted(r["row"] for r in status_rows("f.status.parquet")) == [0, 1, 2]


def test_a_huge_id_or_metadata_value_is_carried_cut_and_says_how_long_it_was(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 31: the value is copied into every finding and status row and sent to the client (a 40 MiB
    # id and note: 664 MB in the client); a value of 1,024 characters is the near miss, carried whole
    import pyarrow as pa
    import pyarrow.parquet as pq

    monkeypatch.chdir(tmp_path)
    body = (FIXTURES / "anthropic/duplicate_tool_ids.sse").read_text(encoding="utf-8")
    huge, whole = "i" * (4 << 20), "w" * 1024
    pq.write_table(pa.table({"body": [body, body], "id": [huge, whole], "note": [whole, huge]}), "t.parquet")
    scan(ScanOptions(("t.parquet",), out="f.parquet", body_column="body", id_column="id", meta_columns=("note",),
                     scheduler=cluster))  # fmt: skip
    cut = "i" * 1024 + f"… (cut: {4 << 20:,} characters)"
    rows = sorted(status_rows("f.status.parquet"), key=lambda r: r["row"])
    assert [(r["id"], r["note"]) for r in rows] == [(cut, whole), (whole, cut)]
    findings = pq.read_table("f.parquet").to_pylist()
    assert findings and {(f["id"], f["note"]) for f in findings if f["row"] == 0} == {(cut, whole)}


def test_a_huge_id_through_the_cli_under_the_address_space_limit(tmp_path: Path) -> None:
    """The same row as a user runs it: ``scan`` in a child under the adversarial tests' address-space limit
    (its local cluster's worker too), within their memory bound. The main process stays at its start
    (about 100 MB, measured with a 40 MiB id); the worker that reads the table holds several copies of the
    row (a 16 MiB id: 236 MB), so the test's value is 4 MiB. The near miss: a 1,024-character id, whole."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tests.test_adversarial import PEAK_BOUND_KB, run_cli

    body = (FIXTURES / "anthropic/duplicate_tool_ids.sse").read_text(encoding="utf-8")
    huge, whole = "i" * (4 << 20), "w" * 1024
    pq.write_table(pa.table({"body": [body, body], "id": [huge, whole]}), tmp_path / "t.parquet")
    ran = run_cli("scan", "t.parquet", "--body-column", "body", "--id-column", "id", "--out", "f.parquet",
                  "--workers", "1", cwd=tmp_path)  # fmt: skip
    assert ran.code == 0 and ran.peak_kb < PEAK_BOUND_KB, (ran.peak_kb, ran.err)  # no --fail-on: exit 0
    cut = "i" * 1024 + f"… (cut: {4 << 20:,} characters)"
    rows = sorted(status_rows(tmp_path / "f.status.parquet"), key=lambda r: r["row"])
    assert [r["id"] for r in rows] == [cut, whole]
    findings = pq.read_table(tmp_path / "f.parquet").to_pylist()
    assert {(f["row"], f["code"], f["id"]) for f in findings} == {(0, "SD405", cut), (1, "SD405", whole)}


def _captures(folder: Path) -> list[str]:
    folder.mkdir()
    labels = []
    for name in BODIES:
        target = folder / name.replace("/", "_")
        target.write_bytes((FIXTURES / name).read_bytes())
        labels.append(target.relative_to(folder.parent).as_posix())
    return sorted(labels)


def _tamper(path: str, change: Any) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(change(pq.read_table(path).to_pylist())), path)


def test_resume_ignores_a_status_table_whose_rows_are_strings(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    monkeypatch.chdir(tmp_path)
    labels = _captures(tmp_path / "logs")
    scan(ScanOptions(("logs",), out="f.parquet", scheduler=cluster))
    table = pq.read_table("f.status.parquet")
    strings = table.set_column(1, "row", pa.array([str(r) for r in table.column("row").to_pylist()], pa.string()))
    pq.write_table(strings, "f.status.parquet")

    result = scan(ScanOptions(("logs",), out="f.parquet", scheduler=cluster, resume=True))
    assert result.plan.ignored == 3 and result.plan.already == 0 and result.scanned == 3
    rows = status_rows("f.status.parquet")
    assert sorted(r["source"] for r in rows) == labels  # each once: none copied, every capture scanned again


def test_resume_trusts_only_keys_of_the_input_once_each(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    labels = _captures(tmp_path / "logs")
    first = scan(ScanOptions(("logs",), out="f.parquet", scheduler=cluster))
    findings = status_rows("f.parquet")
    fake = {"source": "logs/not_in_the_input.sse", "status": "passed"}
    _tamper("f.status.parquet", lambda rows: [*rows, rows[0], {**rows[0], **fake}, {**rows[1], "row": 7}])

    result = scan(ScanOptions(("logs",), out="f.parquet", scheduler=cluster, resume=True))
    assert result.plan.ignored == 3 and result.plan.already == 3 and result.scanned == 0
    rows = status_rows("f.status.parquet")
    assert sorted(r["source"] for r in rows) == labels  # no fake key copied, no capture twice
    assert status_rows("f.parquet") == findings
    assert result.summary.captures == first.summary.captures == 3


def test_resume_state_is_bounded_by_the_input_not_the_status_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from stream_doctor.scan import output, sources

    monkeypatch.chdir(tmp_path)
    labels = _captures(tmp_path / "logs")
    fakes = 200_000
    status = {
        "source": [*labels, *(f"fake/{n}.sse" for n in range(fakes))],
        "row": pa.array([None] * (len(labels) + fakes), pa.int64()),
        "status": ["passed"] * (len(labels) + fakes),
    }
    pq.write_table(pa.table(status), "s.parquet", row_group_size=10_000)
    done, ignored = output.done_keys("s.parquet", sources.listing(ScanOptions(("logs",))).holds)
    assert done == {(label, None) for label in labels} and ignored == fakes
