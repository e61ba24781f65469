"""One Dask cluster (two worker processes, loopback) and generated data sets, shared by the scan tests."""

from __future__ import annotations

import gzip
import logging
import shutil
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.conftest import FIXTURES

pytest.importorskip("distributed", reason="the scan extra is not installed")

#: Fixture folders the mixed data set takes its captures from (every provider, conversations too).
SOURCES = (
    "anthropic",
    "openai",
    "openai-responses",
    "gemini",
    "bedrock",
    "cohere",
    "mistral",
    "ollama",
    "vercel-ai",
    "conversations",
)


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A LocalCluster of 2 worker processes on 127.0.0.1; its scheduler's address."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=":0",  # None still binds Dask's HTTP server to 8787, with a warning when it is taken
        silence_logs=logging.ERROR,
    ) as local:
        yield local.scheduler_address


@pytest.fixture(scope="module")
def captures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of mixed captures: the project's fixtures, a cut gzip file, a hostile tool name, non-captures."""
    root = tmp_path_factory.mktemp("data")
    folder = root / "captures"
    for name in SOURCES:
        shutil.copytree(FIXTURES / name, folder / name)
    shutil.copy(FIXTURES / "check-tree" / "broken" / "truncated.sse.gz", folder / "truncated.sse.gz")
    one_call = (FIXTURES / "anthropic" / "one_call.sse").read_text(encoding="utf-8")
    abandoned = (FIXTURES / "anthropic" / "abandoned_at_max_tokens.sse").read_text(encoding="utf-8")
    hostile = abandoned.replace('"create_file"', '"get_\\u001b[31mweather|</td>`*"')
    assert hostile != abandoned
    (folder / "hostile_tool_name.sse").write_text(hostile, encoding="utf-8")
    (folder / "gzipped_one_call.sse.gz").write_bytes(gzip.compress(one_call.encode()))
    (folder / "notes.bin").write_bytes(bytes(range(256)) * 4)  # not a capture: skipped
    return folder


def check_findings(paths: tuple[str, ...], under: Path | None = None, prefix: str = "") -> Counter[tuple[Any, ...]]:
    """What ``stream-doctor check`` finds in ``paths`` (no configuration): (path, code, line, event, message).

    With ``under``, each path is shown as ``prefix`` + its path below that folder (as a scan of a copy names it).
    """
    from stream_doctor.check.run import execute, prepare
    from stream_doctor.values.command_options import CheckOptions

    result = execute(prepare(CheckOptions(paths=paths, isolated=True, jobs=1)))

    def label(path: str) -> str:
        return path if under is None else prefix + Path(path).resolve().relative_to(under.resolve()).as_posix()

    return Counter(
        (label(c.path), f.code, f.location.line, f.location.event, f.message)
        for c in result.captures
        for f in c.findings
    )


def scan_findings(path: str | Path) -> Counter[tuple[Any, ...]]:
    import pyarrow.parquet as pq

    table = pq.read_table(path).to_pydict()
    return Counter(zip(table["source"], table["code"], table["line"], table["event"], table["message"], strict=True))


def status_rows(path: str | Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()
