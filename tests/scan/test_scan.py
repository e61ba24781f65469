"""``stream-doctor scan`` on a real Dask cluster: folders, tables, fsspec, a remote scheduler, failures."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from stream_doctor.scan.run import scan
from stream_doctor.util.install import REPOSITORY
from stream_doctor.values.command_options import ScanOptions
from tests.conftest import FIXTURES, ROOT
from tests.scan.conftest import check_findings, scan_findings, status_rows

#: a real Dask cluster (local workers, a separate scheduler and worker) and the CLI in subprocesses
pytestmark = [pytest.mark.external, pytest.mark.slow]

#: Upper bound for anything a test waits on (a cluster starting on a busy machine, a scan).
PATIENCE = 120


def _cli(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stream_doctor", *args], capture_output=True, text=True, timeout=PATIENCE, **kwargs
    )


def test_folder_scan_finds_what_check_finds(cluster: str, captures: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(captures.parent)
    options = ScanOptions(("captures",), out="out/findings.parquet", scheduler=cluster, batch_size=7)
    result = scan(options)

    assert scan_findings("out/findings.parquet") == check_findings(("captures",))
    rows = {row["source"]: row for row in status_rows("out/findings.status.parquet")}
    assert result.scanned == result.plan.total == len(rows)
    assert rows["captures/truncated.sse.gz"]["status"] == "unreadable"
    assert "gzip" in rows["captures/truncated.sse.gz"]["error"]
    assert rows["captures/truncated.sse.gz"]["codes"] == ["SD000"]
    assert rows["captures/notes.bin"]["status"] == "skipped"
    assert rows["captures/anthropic/README.md"]["status"] == "skipped"
    assert rows["captures/gzipped_one_call.sse.gz"]["status"] == "passed"
    assert rows["captures/anthropic/one_call.sse"] | {"bytes": None} == {
        "source": "captures/anthropic/one_call.sse", "row": None, "id": None, "provider": "anthropic",
        "model": rows["captures/anthropic/one_call.sse"]["model"], "status": "passed", "findings": 0, "errors": 0,
        "warnings": 0, "infos": 0, "calls": 1, "codes": [], "error": None, "bytes": None,
    }  # fmt: skip
    assert rows["captures/anthropic/one_call.sse"]["model"].startswith("claude")
    providers = {row["provider"] for row in rows.values() if row["provider"]}
    assert {"anthropic", "openai", "gemini", "bedrock", "cohere", "ollama"} <= providers
    # The summary counts what the tables hold.
    summary = result.summary.to_dict()
    assert summary["captures"]["total"] == len(rows)
    assert summary["captures"]["unreadable"] == sum(row["status"] == "unreadable" for row in rows.values())
    assert summary["findings"]["total"] == sum(check_findings(("captures",)).values())
    assert summary["unreadable"] == [
        {"reason": "the gzip data is cut off before its end (incomplete .gz file)", "captures": 1}
    ]
    jsonschema.validate(summary, json.loads((ROOT / "stream_doctor/schemas/scan-summary-v1.schema.json").read_text()))


def test_finding_rows_name_the_call_tool_and_model(
    cluster: str, captures: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow.parquet as pq

    monkeypatch.chdir(captures.parent)
    scan(ScanOptions(("captures/anthropic/abandoned_at_max_tokens.sse",), out="one.parquet", scheduler=cluster))
    rows = pq.read_table("one.parquet").to_pylist()
    assert [(r["code"], r["severity"], r["tool"], r["line"], r["event"]) for r in rows] == [
        ("SD301", "error", "create_file", 70, 24)
    ]
    assert rows[0]["call_id"].startswith("toolu_") and rows[0]["provider"] == "anthropic"
    assert rows[0]["model"] == "claude-sonnet-4-5-20250929" and rows[0]["row"] is None


def _table_records() -> list[dict[str, Any]]:
    """Rows as a gateway would log them: an id, a model, a time, and the raw body as text."""
    names = [
        "anthropic/one_call.sse", "anthropic/empty_input_bug.jsonl", "anthropic/abandoned_at_max_tokens.sse",
        "anthropic/stream_cut_mid_arguments.sse", "openai/one_call.sse", "openai/parallel_calls.sse",
        "gemini/one_call.sse", "gemini/streamed_array.json", "gemini/streamed_array_cut.json",
        "ollama/one_call.jsonl", "mistral/one_call.sse", "cohere/parallel_calls.jsonl",
    ]  # fmt: skip
    records = [
        {"request_id": f"req-{n}", "model": "logged-model", "ts": f"2026-11-0{n % 9 + 1}", "fixture": name,
         "response_body": (FIXTURES / name).read_text(encoding="utf-8")}
        for n, name in enumerate(names)
    ]  # fmt: skip
    records.append({"request_id": "req-null", "model": None, "ts": None, "fixture": None, "response_body": None})
    records.append({"request_id": "req-junk", "model": None, "ts": None, "fixture": None, "response_body": "\x00junk"})
    return records


def _expected_per_row(records: list[dict[str, Any]]) -> dict[int, Counter[tuple[Any, ...]]]:
    expected: dict[int, Counter[tuple[Any, ...]]] = {}
    for row, record in enumerate(records):
        if record["fixture"] is not None:
            found = check_findings((str(FIXTURES / record["fixture"]),))
            expected[row] = Counter((code, line, event, message) for _, code, line, event, message in found)
    return expected


def _per_row(path: str) -> dict[int, Counter[tuple[Any, ...]]]:
    import pyarrow.parquet as pq

    found: dict[int, Counter[tuple[Any, ...]]] = {}
    for r in pq.read_table(path).to_pylist():
        found.setdefault(r["row"], Counter())[(r["code"], r["line"], r["event"], r["message"])] += 1
    return found


def test_parquet_table_row_groups(cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    monkeypatch.chdir(tmp_path)
    records = _table_records()
    pq.write_table(pa.Table.from_pylist(records), "traffic.parquet", row_group_size=3)
    assert pq.ParquetFile("traffic.parquet").metadata.num_row_groups == 5
    options = ScanOptions(
        ("traffic.parquet",),
        out="findings.parquet",
        body_column="response_body",
        id_column="request_id",
        model_column="model",
        meta_columns=("ts",),
        scheduler=cluster,
        batch_size=4,
    )
    result = scan(options)

    expected = _expected_per_row(records)
    found = _per_row("findings.parquet")
    for row, counter in expected.items():
        assert found.get(row, Counter()) == counter, records[row]["fixture"]
    status = {r["row"]: r for r in status_rows("findings.status.parquet")}
    assert sorted(status) == list(range(len(records))) and result.scanned == len(records)
    assert status[12]["status"] == "unreadable" and "null" in status[12]["error"] and status[12]["id"] == "req-null"
    assert status[13]["status"] == "unreadable" and status[13]["codes"] == ["SD000"]
    assert status[0] | {"bytes": 0} == {
        "source": "traffic.parquet", "row": 0, "id": "req-0", "provider": "anthropic",
        "model": status[0]["model"], "status": "passed", "findings": 0, "errors": 0, "warnings": 0, "infos": 0,
        "calls": 1, "codes": [], "error": None, "bytes": 0, "ts": "2026-11-01",
    }  # fmt: skip
    assert status[0]["model"].startswith("claude")  # the stream's own model wins over the column
    assert status[9]["model"] in ("logged-model", status[9]["model"])
    rows = pq.read_table("findings.parquet").to_pylist()
    assert {r["id"] for r in rows if r["row"] == 2} == {"req-2"} and {r["ts"] for r in rows if r["row"] == 2} == {
        "2026-11-03"
    }


def test_jsonl_table(cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import orjson

    monkeypatch.chdir(tmp_path)
    records = _table_records()
    lines = [orjson.dumps(record) for record in records] * 3  # 42 rows: several line granules
    lines[20] = b"{not json"
    Path("traffic.jsonl").write_bytes(b"\n".join(lines))  # no newline after the last row
    scan(ScanOptions(("traffic.jsonl",), out="f.parquet", body_column="response_body", scheduler=cluster))

    status = {r["row"]: r for r in status_rows("f.status.parquet")}
    assert sorted(status) == list(range(42))
    assert status[20]["status"] == "unreadable" and "not JSON" in status[20]["error"]
    expected = _expected_per_row(records)
    found = _per_row("f.parquet")
    for row in range(42):
        if row != 20 and row % 14 in expected:
            assert found.get(row, Counter()) == expected[row % 14]


def test_memory_filesystem(cluster: str, captures: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``memory://`` stands for an object store: every process (client and workers) sees the same files."""
    from distributed import Client

    names = [
        "anthropic/one_call.sse",
        "anthropic/empty_input_bug.jsonl",
        "openai/parallel_calls.sse",
        "anthropic/README.md",
    ]
    files = {f"/bucket/logs/{name}": (FIXTURES / name).read_bytes() for name in names}

    def populate(content: dict[str, bytes]) -> None:
        import fsspec

        fs = fsspec.filesystem("memory")
        for path, data in content.items():
            fs.pipe_file(path, data)

    def clear() -> None:
        import fsspec

        fsspec.filesystem("memory").rm("/bucket", recursive=True)

    monkeypatch.chdir(captures.parent)
    with Client(cluster, set_as_default=False) as client:
        client.run(populate, files)
        populate(files)
        try:
            scan(ScanOptions(("memory://bucket/logs/**/*.sse", "memory://bucket/logs/anthropic"), out="mem.parquet",
                             scheduler=cluster))  # fmt: skip
        finally:
            client.run(clear)
            clear()
    found = scan_findings("mem.parquet")
    assert found == check_findings(tuple(str(FIXTURES / n) for n in names[:3]), FIXTURES, "memory:///bucket/logs/")
    status = {
        r["source"].removeprefix("memory:///bucket/logs/"): r["status"] for r in status_rows("mem.status.parquet")
    }
    assert status == {
        "anthropic/one_call.sse": "passed",
        "anthropic/empty_input_bug.jsonl": "findings",
        "openai/parallel_calls.sse": "passed",
        "anthropic/README.md": "skipped",  # in the folder, not a capture
    }


def test_killed_worker_has_its_batch_retried(cluster: str, captures: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from distributed import Client

    from tests.scan.plugins import DieOnFirstBatch

    monkeypatch.chdir(captures.parent)
    marker = captures.parent / "worker-killed"
    with Client(cluster, set_as_default=False) as client:
        client.register_plugin(DieOnFirstBatch(str(marker)), name="die-on-first-batch")
        try:
            result = scan(ScanOptions(("captures/anthropic", "captures/openai"), out="k.parquet", scheduler=cluster,
                                      batch_size=5))  # fmt: skip
        finally:
            client.unregister_worker_plugin("die-on-first-batch")
        client.wait_for_workers(2, timeout=PATIENCE)
    assert marker.exists()  # a worker did die while running a batch …
    rows = status_rows("k.status.parquet")
    assert len(rows) == len({r["source"] for r in rows}) == result.plan.total  # … and every capture is there once
    assert not [r for r in rows if r["status"] == "lost"]
    assert scan_findings("k.parquet") == check_findings(("captures/anthropic", "captures/openai"))


def test_summary_outputs_neutralise_capture_text(cluster: str, captures: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stream_doctor.reporters import RenderOptions
    from stream_doctor.scan.summary import render_markdown, render_terminal

    monkeypatch.chdir(captures.parent)
    result = scan(ScanOptions(("captures/hostile_tool_name.sse", "captures/anthropic"), out="h.parquet",
                              scheduler=cluster))  # fmt: skip
    text = render_markdown(result.summary)
    assert "\x1b" not in text and "</td>" not in text
    assert "| get\\_\\\\u001b\\[31mweather\\|&lt;/td&gt;\\`\\* | 1 |" in text  # shown as typed, one cell
    shown = render_terminal(result.summary, RenderOptions(width=200, color_system="truecolor"))
    assert "\x1b[31m" not in shown and "get_\\u001b[31mweather|</td>`*" in shown
    data = result.summary.to_dict()
    assert any(t["tool"] == "create_file" for t in data["tools"])
    codes = {c["code"]: c for c in data["codes"]}
    assert codes["SD301"]["captures"] >= 1 and 0 < codes["SD301"]["share"] < 1


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_scan_through_a_separate_scheduler_and_worker(captures: Path, tmp_path: Path) -> None:
    """`dask scheduler` and `dask worker` as their own processes on 127.0.0.1, always stopped."""
    from distributed import Client

    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    common = {"cwd": tmp_path, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True}
    processes = [
        subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", str(port),
                          "--no-dashboard"], **common),  # type: ignore[call-overload]
        subprocess.Popen([sys.executable, "-m", "dask", "worker", address, "--host", "127.0.0.1", "--nworkers", "1",
                          "--nthreads", "1", "--no-dashboard"], **common),  # type: ignore[call-overload]
    ]  # fmt: skip
    try:
        deadline = time.monotonic() + PATIENCE
        while True:  # the scheduler takes a moment to listen
            try:
                with Client(address, timeout=5, set_as_default=False) as client:
                    client.wait_for_workers(1, timeout=PATIENCE)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        run = _cli(
            "scan", str(captures / "anthropic"), "--scheduler", address, "--out", "f.parquet",
            "--summary", "s.json", "--summary", "s.md", "--width", "100", cwd=tmp_path,
        )  # fmt: skip
    finally:
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=PATIENCE)
    assert run.returncode == 0, run.stderr
    assert f"the Dask scheduler at {address} (1 workers)" in run.stderr
    assert "Share of captures with each problem" in run.stdout
    summary = json.loads((tmp_path / "s.json").read_text())
    schema = json.loads((ROOT / "stream_doctor/schemas/scan-summary-v1.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(summary, schema)
    assert summary["schema_version"] == "scan-summary-v1"
    assert summary["captures"]["total"] == len(status_rows(tmp_path / "f.status.parquet"))
    assert (tmp_path / "s.md").read_text().startswith("# stream-doctor scan")
    # Dask's own logging stays out of the user's way.
    assert "distributed." not in run.stderr and "Traceback" not in run.stderr


def test_ctrl_c_leaves_valid_output_and_resume_finishes(cluster: str, captures: Path, tmp_path: Path) -> None:
    """SIGINT mid-scan: both tables valid with what finished; ``--resume`` scans only the rest."""
    import shutil

    data = tmp_path / "many"
    for copy in range(4):
        shutil.copytree(captures / "anthropic", data / f"copy{copy}")
    command = [sys.executable, "-m", "stream_doctor", "scan", "many", "--out", "f.parquet", "--workers", "1",
               "--batch-size", "2"]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=tmp_path, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert process.stderr is not None
        lines = []
        for line in process.stderr:  # the default local cluster starts, then batches finish
            lines.append(line)
            if line.startswith("scanned "):
                break
        os.killpg(process.pid, signal.SIGINT)  # as a terminal does: the scan and its worker processes
        out, err = process.communicate(timeout=PATIENCE)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    err = "".join(lines) + err
    assert process.returncode == 130, err
    assert "--resume" in err and "Traceback" not in err
    assert not list(tmp_path.glob("*.part"))
    finished = status_rows(tmp_path / "f.status.parquet")
    total = sum(1 for p in data.rglob("*") if p.is_file())
    assert 0 < len(finished) < total
    expected = check_findings((str(data),), data, "many/")
    done = {r["source"] for r in finished}
    assert scan_findings(tmp_path / "f.parquet") == Counter({k: n for k, n in expected.items() if k[0] in done})

    os.chdir(tmp_path)
    try:
        result = scan(ScanOptions(("many",), out="f.parquet", resume=True, scheduler=cluster))
    finally:
        os.chdir(ROOT)
    assert result.plan.already == len(finished) and result.scanned == total - len(finished)
    rows = status_rows(tmp_path / "f.status.parquet")
    assert len(rows) == len({r["source"] for r in rows}) == total
    assert scan_findings(tmp_path / "f.parquet") == expected
    assert result.summary.captures == total


def test_sample_is_a_seeded_subset(cluster: str, captures: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(captures.parent)
    first = scan(ScanOptions(("captures",), out="a.parquet", sample=10, scheduler=cluster))
    scan(ScanOptions(("captures",), out="b.parquet", sample=10, scheduler=cluster))
    assert first.plan.total == 10 and first.plan.listed > 10
    assert {r["source"] for r in status_rows("a.status.parquet")} == {
        r["source"] for r in status_rows("b.status.parquet")
    }


def test_bad_inputs_exit_2_before_a_cluster_starts(tmp_path: Path) -> None:
    missing = _cli("scan", "no-such-folder", cwd=tmp_path)
    assert missing.returncode == 2 and missing.stderr.startswith("stream-doctor: error: no-such-folder: no such file")
    table = tmp_path / "t.parquet"
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"body": ["x"]}), table)
    no_column = _cli("scan", str(table), cwd=tmp_path)
    assert no_column.returncode == 2 and "--body-column" in no_column.stderr
    wrong_column = _cli("scan", str(table), "--body-column", "response", cwd=tmp_path)
    assert wrong_column.returncode == 2 and "no column 'response' (columns: body)" in wrong_column.stderr
    typo = _cli("scan", str(table), "--body-column", "body", "--provider", "antropic", cwd=tmp_path)
    assert typo.returncode == 2 and "unknown provider 'antropic'; did you mean 'anthropic'?" in typo.stderr
    assert "Traceback" not in missing.stderr + no_column.stderr + wrong_column.stderr + typo.stderr


def test_scan_without_the_extra_exits_2_with_the_install_command(tmp_path: Path) -> None:
    blocker = (
        "import sys\n"
        "class Missing:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('dask', 'distributed', 'pyarrow', 'fsspec'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Missing())\n"
        "sys.argv = ['stream-doctor', 'scan', '.']\n"
        "from stream_doctor.cli import main\n"
        "main()\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", blocker], capture_output=True, text=True, cwd=tmp_path, timeout=PATIENCE
    )
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        'stream-doctor: error: scan needs dask, which is not installed: pip install -e ".[scan]" in a clone of '
        f'stream-doctor, or pip install "stream-doctor[scan] @ git+{REPOSITORY}"'
    ]


def test_replay_and_check_never_import_the_scan_dependencies() -> None:
    probe = (
        "import sys\n"
        "from stream_doctor.cli import app\n"
        "for argv in (['replay', 'fixtures/anthropic/one_call.sse'], ['check', 'fixtures/check-tree/clean'],"
        " ['rules']):\n"
        "    try:\n"
        "        app(argv, standalone_mode=False)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed', 'pyarrow', 'fsspec'))\n"
        "print('IMPORTED', heavy, file=sys.stderr)\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=PATIENCE)
    assert "IMPORTED []" in run.stderr, run.stderr[-2000:]


def test_a_batch_dask_gives_up_on_is_lost_rows_and_resume_scans_them(
    cluster: str, captures: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no failure allowed, the batch whose worker died is given up on: its captures are `lost`, the rest is scanned."""
    import logging

    import dask
    from distributed import Client, LocalCluster

    from tests.scan.plugins import DieOnFirstBatch

    monkeypatch.chdir(captures.parent)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0",
            silence_logs=logging.CRITICAL,
        ) as local, Client(local, set_as_default=False) as client:  # fmt: skip
            client.register_plugin(DieOnFirstBatch(str(captures.parent / "lost-marker")), name="die-on-first-batch")
            options = ScanOptions(("captures/anthropic",), out="lost.parquet", scheduler=local.scheduler_address,
                                  batch_size=10)  # fmt: skip
            result = scan(options)
    rows = status_rows("lost.status.parquet")
    lost = {r["source"] for r in rows if r["status"] == "lost"}
    # Every batch the dead worker held is given up on (at least the one it was running), never the rest.
    assert len(rows) == result.plan.total and 10 <= len(lost) < len(rows) and len(lost) % 10 == 0
    assert {ref.label for ref in result.plan.batches[0].files} <= lost
    assert all("kept dying" in r["error"] for r in rows if r["status"] == "lost")
    assert result.summary.statuses["lost"] == len(lost)
    # Resumed (on the shared cluster), only the lost captures are scanned again.
    again = scan(ScanOptions(("captures/anthropic",), out="lost.parquet", scheduler=cluster, resume=True))
    assert again.scanned == len(lost) and again.plan.already == len(rows) - len(lost)
    rows = status_rows("lost.status.parquet")
    assert len(rows) == len({r["source"] for r in rows}) == result.plan.total and not any(
        r["status"] == "lost" for r in rows
    )
    assert scan_findings("lost.parquet") == check_findings(("captures/anthropic",))


def test_scan_tables_hold_no_planted_secret(cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A capture's request bodies are read as sent and redacted where something is written: the
    findings and status tables and the summary of a folder of planted captures hold no secret."""
    import pyarrow.parquet as pq

    from tests import planted_secrets

    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "planted"
    folder.mkdir()
    paths = planted_secrets.write_all(folder)
    result = scan(ScanOptions(("planted",), out="out/f.parquet", scheduler=cluster))
    assert result.scanned == len(paths)
    rows = [*pq.read_table("out/f.parquet").to_pylist(), *pq.read_table("out/f.status.parquet").to_pylist()]
    assert any(row.get("code") == "SD609" for row in rows)  # a finding that quotes a request's history
    written = json.dumps(rows, default=str) + json.dumps(result.summary.to_dict())
    assert [secret for secret in planted_secrets.SECRETS if secret in written] == []


def test_fail_on_exits_1_when_a_finding_reaches_it(cluster: str, tmp_path: Path) -> None:
    # pause_turn.sse holds one info finding (SD305) and nothing above it: --fail-on info (any case, as
    # every command reads a severity) exits 1, --fail-on warning is the near miss
    capture = str(ROOT / "fixtures/anthropic/pause_turn.sse")

    def scanned(level: str) -> subprocess.CompletedProcess[str]:
        outputs = ("--out", f"{level}.parquet", "--status", f"{level}-status.parquet")
        return _cli("scan", capture, *outputs, "--scheduler", cluster, "--fail-on", level, cwd=tmp_path)

    fires, near_miss = scanned("Info"), scanned("warning")
    assert fires.returncode == 1, fires.stderr
    assert near_miss.returncode == 0, near_miss.stderr
