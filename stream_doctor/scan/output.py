"""The Parquet tables ``scan`` writes: findings (one row per finding) and status (one row per capture).

Each is written to ``PATH.part`` and renamed over ``PATH`` when closed, so a scan that stops
(finished, interrupted, or failed) leaves either the previous file or a whole new one, never a
half-written one. Rows are buffered into row groups of a useful size rather than one per batch.
``--resume`` copies what the previous tables hold into the new ones first, trusting them only as far
as they are checked: a status row whose key is not a capture of the input, or whose columns have the
wrong types, is ignored and counted, and a capture's status row is copied once; what the resume
keeps in memory is a set of the input's keys, whatever the size of the status table.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Iterator

from stream_doctor.scan import ScanError
from stream_doctor.scan.task import FINDING_COLUMNS, STATUS_COLUMNS, STATUSES

if TYPE_CHECKING:
    import pyarrow as pa

    from stream_doctor.scan.sources import Key

#: Rows held before they are written as one row group.
ROW_GROUP_ROWS = 64 * 1024
#: Status rows of captures to scan again on ``--resume`` (their batch was lost, not replayed).
RESCANNED = frozenset({"lost"})

_INTEGERS = frozenset(
    {"row", "line", "event", "interaction", "findings", "errors", "warnings", "infos", "calls", "bytes"}
)


def schema(kind: str, meta_columns: tuple[str, ...]) -> pa.Schema:
    import pyarrow as pa

    names = FINDING_COLUMNS if kind == "findings" else STATUS_COLUMNS
    fields = []
    for name in (*names, *meta_columns):
        if name in _INTEGERS:
            fields.append(pa.field(name, pa.int64()))
        elif name == "codes":
            fields.append(pa.field(name, pa.list_(pa.string())))
        else:
            fields.append(pa.field(name, pa.string()))
    return pa.schema(fields)


def check_meta_columns(meta_columns: tuple[str, ...]) -> None:
    taken = set(FINDING_COLUMNS) | set(STATUS_COLUMNS)
    for name in meta_columns:
        if name in taken:
            raise ScanError(f"--meta-column {name}: the outputs already have a column of that name")


class TableWriter:
    """A Parquet table written in row groups to ``path.part``, renamed to ``path`` by ``close``."""

    def __init__(self, path: str, table_schema: pa.Schema) -> None:
        import pyarrow.parquet as pq

        self.path, self.part, self.schema = path, f"{path}.part", table_schema
        self.rows = 0
        self._held: list[dict[str, list[Any]]] = []
        self._held_rows = 0
        try:
            if os.path.dirname(path):
                os.makedirs(os.path.dirname(path), exist_ok=True)
            self._writer = pq.ParquetWriter(self.part, table_schema)
        except OSError as error:
            raise ScanError(f"{path}: cannot write it: {error.strerror or error}") from None

    def copy(self, previous: Iterator[pa.RecordBatch]) -> None:
        import pyarrow as pa

        for batch in previous:
            try:
                table = pa.Table.from_batches([batch]).cast(self.schema)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
                message = " ".join(str(error).split())
                raise ScanError(
                    f"{self.path}: cannot resume from it, a column holds values of another type ({message}); "
                    "scan into a new --out instead of --resume"
                ) from None
            self._writer.write_table(table)
            self.rows += batch.num_rows

    def write(self, columns: dict[str, list[Any]]) -> None:
        count = len(columns["source"])
        if not count:
            return
        self._held.append(columns)
        self._held_rows += count
        self.rows += count
        if self._held_rows >= ROW_GROUP_ROWS:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if self._held:
            tables = [pa.table(columns, schema=self.schema) for columns in self._held]
            self._writer.write_table(pa.concat_tables(tables))
            self._held, self._held_rows = [], 0

    def close(self) -> None:
        self._flush()
        self._writer.close()
        os.replace(self.part, self.path)

    def discard(self) -> None:
        self._writer.close()
        os.remove(self.part)


def previous(path: str, table_schema: pa.Schema, keep: set[Key], once: bool = False) -> Iterator[pa.RecordBatch]:
    """The rows of an earlier output about the captures in ``keep`` (what ``--resume`` does not scan again);
    with ``once``, only the first row of each capture (a status table has one per capture)."""
    import pyarrow as pa

    table_file = _open(path)
    if table_file is None:
        return
    if table_file.schema_arrow.names != table_schema.names:
        raise ScanError(
            f"{path}: its columns are not the ones this scan writes "
            f"({', '.join(table_file.schema_arrow.names)}); scan into a new --out instead of --resume"
        )
    if not _keys_typed(table_file.schema_arrow):
        return  # keys of other types name no capture of the input (done_keys ignored them too)
    copied: set[Key] = set()
    for batch in table_file.iter_batches():
        keys = zip(batch.column("source").to_pylist(), batch.column("row").to_pylist(), strict=True)
        wanted = []
        for key in keys:
            take = key in keep and key not in copied
            if take and once:
                copied.add(key)
            wanted.append(take)
        yield batch.filter(pa.array(wanted, pa.bool_()))


def done_keys(status_path: str, holds: Callable[[object, object], bool]) -> tuple[set[Key], int]:
    """Every capture of the input an earlier status table holds (lost ones excepted), which ``--resume``
    skips, and how many of its rows were ignored: a key ``holds`` says is not in the input, columns of
    the wrong types, a second row for one capture. The set never holds more than the input's keys."""
    import pyarrow as pa

    table_file = _open(status_path)
    if table_file is None:
        return set(), 0
    table_schema = table_file.schema_arrow
    missing = [name for name in ("source", "row", "status") if name not in table_schema.names]
    if missing:
        raise ScanError(
            f"{status_path}: it has no {missing[0]!r} column, not a status table of scan; "
            "scan into a new --out instead of --resume"
        )
    typed = _keys_typed(table_schema) and pa.types.is_string(table_schema.field("status").type)
    keys: set[Key] = set()
    ignored = 0
    for batch in table_file.iter_batches(columns=["source", "row", "status"]):
        if not typed:
            ignored += batch.num_rows
            continue
        columns = (batch.column(name).to_pylist() for name in ("source", "row", "status"))
        for source, row, state in zip(*columns, strict=True):
            if state in RESCANNED:
                continue  # its batch was lost: scanned again, not a doubt about the table
            if state not in STATUSES or not holds(source, row) or (source, row) in keys:
                ignored += 1
            else:
                keys.add((source, row))
    return keys, ignored


def _keys_typed(table_schema: pa.Schema) -> bool:
    """Whether a table's key columns have the types scan writes (a string source, an integer row)."""
    import pyarrow as pa

    source, row = table_schema.field("source").type, table_schema.field("row").type
    return bool(pa.types.is_string(source) and (pa.types.is_int64(row) or pa.types.is_null(row)))  # null: files only


def _open(path: str):  # type: ignore[no-untyped-def]
    import pyarrow.parquet as pq

    from stream_doctor.util.opener import UnreadableFile, opened

    if not os.path.exists(path):
        return None
    try:
        with opened(path, None):  # a FIFO would block pyarrow for ever; a folder or device is refused
            pass
    except UnreadableFile as error:
        raise ScanError(f"{path}: cannot resume from it: {error}") from None
    try:
        return pq.ParquetFile(path)
    except Exception as error:  # noqa: BLE001 - pyarrow's errors share no useful base
        raise ScanError(f"{path}: cannot resume from it, it is not a readable Parquet file: {error}") from None
