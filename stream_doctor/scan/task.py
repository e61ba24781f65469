"""One batch of captures, replayed on a Dask worker: what it returns are plain columns.

Nothing here raises for a capture: one that cannot be read or replayed (or that trips a bug of
ours) becomes a status row with the reason, and an SD000 finding as in ``check``; a file that is
not a capture (found in a folder, not recognised by its first bytes) is a ``skipped`` row. The
columns are lists of Python values, cheap to send back and turned into Arrow by the client.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator

from stream_doctor import RunError
from stream_doctor.capture import HEAD_SIZE
from stream_doctor.check.discover import head_looks_like_capture
from stream_doctor.engine.redaction import redacted
from stream_doctor.rules.check import sd000_capture_unreadable as sd000
from stream_doctor.scan.replaying import replay_capture

if TYPE_CHECKING:
    from stream_doctor.scan.sources import Batch, Segment
    from stream_doctor.values.findings import Finding
    from stream_doctor.values.options import Given
    from stream_doctor.values.report import Report

FINDING_COLUMNS = (
    "source", "row", "id", "provider", "model", "code", "name", "severity",
    "call_id", "tool", "line", "event", "interaction", "message",
)  # fmt: skip
STATUS_COLUMNS = (
    "source", "row", "id", "provider", "model", "status", "findings", "errors", "warnings", "infos",
    "calls", "codes", "error", "bytes",
)  # fmt: skip
STATUSES = ("passed", "findings", "unreadable", "skipped", "lost")

#: Rows of a table read at once from a row group.
READ_ROWS = 256
#: The longest id, model or metadata value carried whole into the rows (docs/scan.md).
MAX_CARRIED = 1024


@dataclass(frozen=True)
class Settings:
    """What every task needs besides its batch."""

    options: Given
    body_column: str | None = None
    id_column: str | None = None
    model_column: str | None = None
    meta_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class Item:
    """One capture as read: its bytes, or why they could not be had."""

    source: str
    row: int | None
    data: bytes | None
    problem: str | None = None
    named: bool = True  # replayed even when its first bytes are not recognised
    ident: str | None = None
    model: str | None = None
    meta: tuple[str | None, ...] = ()


Columns = dict[str, list[Any]]


def scan_batch(batch: Batch, settings: Settings) -> dict[str, Columns]:
    """Replay every capture of ``batch``: ``{"findings": columns, "status": columns}``."""
    extra = settings.meta_columns
    findings: Columns = {name: [] for name in (*FINDING_COLUMNS, *extra)}
    status: Columns = {name: [] for name in (*STATUS_COLUMNS, *extra)}
    for item in _items(batch, settings):
        _scan_one(item, settings, findings, status)
    return {"findings": findings, "status": status}


def lost(batch: Batch, reason: str, settings: Settings) -> dict[str, Columns]:
    """The status rows of a batch whose workers kept dying (Dask gave up on it): one per capture it held."""
    extra = settings.meta_columns
    status: Columns = {name: [] for name in (*STATUS_COLUMNS, *extra)}
    for source, row in _keys(batch):
        _status(status, Item(source, row, None, meta=(None,) * len(extra)), "lost", reason)
    return {"findings": {name: [] for name in (*FINDING_COLUMNS, *extra)}, "status": status}


def _scan_one(item: Item, settings: Settings, findings: Columns, status: Columns) -> None:
    if item.data is None:
        _add_finding(findings, item, sd000.finding(item.source, item.problem or "unreadable"), None, None, {})
        _status(status, item, "unreadable", item.problem, codes=[sd000.check.code], counts=(1, 0, 0))
        return
    if not item.named and not head_looks_like_capture(item.data[:HEAD_SIZE]):
        _status(status, item, "skipped", "not a capture (its first bytes match no capture format)")
        return
    name = item.source if item.row is None else f"{item.source}#{item.row}"
    try:
        report = redacted(replay_capture(item.data, name, settings.options))  # the tables never hold a secret
    except RunError as error:
        message = error.message if error.line is None else f"line {error.line}: {error.message}"
        _add_finding(findings, item, sd000.finding(item.source, error.message, error.line), None, None, {})
        _status(status, item, "unreadable", message, codes=[sd000.check.code], counts=(1, 0, 0))
        return
    except Exception as error:  # noqa: BLE001 - a bug of ours fails one capture, not the scan
        if os.environ.get("STREAM_DOCTOR_DEBUG"):
            raise
        message = f"internal error {type(error).__name__}: {error}"
        _add_finding(findings, item, sd000.finding(item.source, message), None, None, {})
        _status(status, item, "unreadable", message, codes=[sd000.check.code], counts=(1, 0, 0))
        return
    provider, model = report.stream.capture.provider, _model(report) or item.model
    tools = {call.call_id: call.name for call in report.calls if call.call_id is not None}
    for finding in report.findings:
        _add_finding(findings, item, finding, provider, model, tools)
    counts = [0, 0, 0]
    for finding in report.findings:
        counts[3 - int(finding.severity)] += 1
    _status(
        status,
        item,
        "findings" if report.findings else "passed",
        None,
        provider,
        model,
        sorted({f.code for f in report.findings}),
        (counts[0], counts[1], counts[2]),
        len(report.calls),
    )


def _add_finding(
    columns: Columns, item: Item, finding: Finding, provider: str | None, model: str | None, tools: dict[str, Any]
) -> None:
    where = finding.location
    values = (
        item.source, item.row, item.ident, provider, model, finding.code, finding.name, finding.severity.label,
        finding.call_id, tools.get(finding.call_id) if finding.call_id is not None else None,
        where.line, where.event, where.interaction, finding.message,
    )  # fmt: skip
    for name, value in zip(FINDING_COLUMNS, values, strict=True):
        columns[name].append(value)
    _meta(columns, item)


def _status(
    columns: Columns,
    item: Item,
    state: str,
    error: str | None,
    provider: str | None = None,
    model: str | None = None,
    codes: list[str] | None = None,
    counts: tuple[int, int, int] = (0, 0, 0),
    calls: int = 0,
) -> None:
    found = sum(counts)
    values = (
        item.source, item.row, item.ident, provider, model, state, found, *counts, calls, codes or [], error,
        len(item.data) if item.data is not None else None,
    )  # fmt: skip
    for name, value in zip(STATUS_COLUMNS, values, strict=True):
        columns[name].append(value)
    _meta(columns, item)


def _meta(columns: Columns, item: Item) -> None:
    names = list(columns)[-len(item.meta) :] if item.meta else []
    for name, value in zip(names, item.meta, strict=True):
        columns[name].append(value)


def _model(report: Report) -> str | None:
    streams = [turn.stream for turn in report.turns] or [report.stream]
    return next((m.model for s in streams for m in s.messages if m.model), None)


def _keys(batch: Batch) -> Iterator[tuple[str, int | None]]:
    for ref in batch.files:
        yield ref.label, None
    for label, _ in batch.broken:
        yield label, None
    if batch.table is not None:
        for segment in batch.segments:
            for row in range(segment.first_row, segment.first_row + segment.rows):
                if batch.only is None or row in batch.only:
                    yield batch.table.label, row


# Reading ---------------------------------------------------------------------------------------


def _items(batch: Batch, settings: Settings) -> Iterator[Item]:
    blank = (None,) * len(settings.meta_columns)
    filesystems: dict[str, Any] = {}
    for ref in batch.files:
        data, problem = _read_file(ref.url, filesystems)
        yield Item(ref.label, None, data, problem, ref.named, meta=blank)
    for label, problem in batch.broken:  # a table that could not be listed: one unreadable row, its reason
        yield Item(label, None, None, problem, meta=blank)
    if batch.table is None:
        return
    reader = _parquet_rows if batch.table.kind == "parquet" else _jsonl_rows
    seen: set[int | None] = set()
    try:
        for item in reader(batch, settings):
            seen.add(item.row)
            yield item
    except Exception as error:  # noqa: BLE001 - the table broke under us: every row not yet read says why
        reason = f"cannot read the table: {type(error).__name__}: {error}"
        for source, row in _keys(batch):
            if row not in seen:
                yield Item(source, row, None, reason, meta=blank)


def _read_file(url: str, filesystems: dict[str, Any]) -> tuple[bytes | None, str | None]:
    """A file's bytes through fsspec (one filesystem object per protocol and batch: opening by URL
    costs a fifth of a small capture's replay)."""
    import fsspec

    protocol = url.split("://", 1)[0] if "://" in url else "file"
    try:
        fs = filesystems.get(protocol)
        if fs is None:
            fs = filesystems[protocol] = fsspec.core.url_to_fs(url)[0]
        return fs.cat_file(url), None
    except FileNotFoundError:
        return None, "no such file (it went away during the scan)"
    except IsADirectoryError:
        return None, "is a directory, not a capture file"
    except PermissionError:
        return None, "permission denied"
    except OSError as error:
        return None, f"cannot read the file: {error.strerror or error}"


def _parquet_rows(batch: Batch, settings: Settings) -> Iterator[Item]:
    import fsspec
    import pyarrow.parquet as pq

    assert batch.table is not None and settings.body_column is not None
    wanted = [settings.body_column, settings.id_column, settings.model_column, *settings.meta_columns]
    columns = list(dict.fromkeys(name for name in wanted if name is not None))
    with fsspec.open(batch.table.url, "rb") as file:
        table = pq.ParquetFile(file)
        for segment in batch.segments:
            row = segment.first_row
            for records in table.iter_batches(batch_size=READ_ROWS, row_groups=[segment.row_group], columns=columns):
                values = {name: records.column(name).to_pylist() for name in columns}
                for offset in range(records.num_rows):
                    if batch.only is None or row + offset in batch.only:
                        yield _row_item(
                            batch.table.label, row + offset, {n: values[n][offset] for n in columns}, settings
                        )
                row += records.num_rows


def _jsonl_rows(batch: Batch, settings: Settings) -> Iterator[Item]:
    import fsspec
    import orjson

    assert batch.table is not None
    compression = "infer" if batch.table.kind == "jsonl-compressed" else None
    with fsspec.open(batch.table.url, "rb", compression=compression) as file:
        for segment in batch.segments:
            lines = _segment_lines(file, segment)
            for row, line in enumerate(lines, segment.first_row):
                if batch.only is not None and row not in batch.only:
                    continue
                if not line.strip():
                    yield Item(batch.table.label, row, None, "an empty line, not a row", meta=_blank(settings))
                    continue
                try:
                    record = orjson.loads(line)
                except orjson.JSONDecodeError as error:
                    yield Item(batch.table.label, row, None, f"the row is not JSON: {error}", meta=_blank(settings))
                    continue
                if not isinstance(record, dict):
                    problem = f"the row is a JSON {type(record).__name__}, not an object"
                    yield Item(batch.table.label, row, None, problem, meta=_blank(settings))
                    continue
                yield _row_item(batch.table.label, row, record, settings)


def _segment_lines(file: Any, segment: Segment) -> Iterator[bytes]:
    if segment.end < 0:  # a compressed table: read as a stream, from the start
        for line in file:
            yield line.rstrip(b"\r\n")
        return
    file.seek(segment.start)
    data = file.read(segment.end - segment.start)
    for line in data.split(b"\n")[: segment.rows]:
        yield line.rstrip(b"\r")


def _row_item(source: str, row: int, record: dict[str, Any], settings: Settings) -> Item:
    assert settings.body_column is not None
    meta = tuple(_text(record.get(name)) for name in settings.meta_columns)
    ident = _text(record.get(settings.id_column)) if settings.id_column else None
    model = _text(record.get(settings.model_column)) if settings.model_column else None
    if settings.body_column not in record:
        return Item(source, row, None, f"the row has no {settings.body_column!r} field", True, ident, model, meta)
    body, problem = _body(record[settings.body_column], settings.body_column)
    return Item(source, row, body, problem, True, ident, model, meta)


def _body(value: Any, column: str) -> tuple[bytes | None, str | None]:
    """A body cell as capture bytes: text or bytes as stored, decoded JSON (a chunk array) re-encoded."""
    import orjson

    if value is None:
        return None, f"the {column!r} cell is empty (null)"
    if isinstance(value, bytes):
        return value, None
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass"), None
    try:
        return orjson.dumps(value), None
    except TypeError as error:
        return None, f"the {column!r} cell holds {type(value).__name__}, not a body: {error}"


def _text(value: Any) -> str | None:
    """An id, model or metadata value as the rows carry it: at most ``MAX_CARRIED`` characters, and
    how long it was when longer (it is copied into every finding and status row of its capture, and
    sent to the client: a 40 MiB id took the client to 664 MB, issue 31)."""
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    if len(text) <= MAX_CARRIED:
        return text
    return f"{text[:MAX_CARRIED]}… (cut: {len(text):,} characters)"


def _blank(settings: Settings) -> tuple[None, ...]:
    return (None,) * len(settings.meta_columns)
