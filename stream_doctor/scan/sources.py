"""What ``scan`` reads, cut into batches: files (local, globs, any fsspec URL) and tables.

Runs on the client and only lists: it never reads a capture. Files are grouped into batches of
captures (a big file is a batch of its own); a Parquet table is cut along its row groups (a
worker reads one row group at a time, so memory stays bounded however large the table is); an
uncompressed JSONL table (one capture per row) along lines, found by one pass over its bytes.
Every capture has a key, ``(source, row)`` (``row`` is ``None`` for a file), that ``--resume``
and ``--sample`` work with. A table that cannot be listed (a corrupt Parquet footer, an unreadable
file) is one capture of its own, key ``(source, None)``, that the worker reports unreadable with
the reason: the other inputs are scanned all the same.
"""

from __future__ import annotations

import random
from array import array
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Literal

from stream_doctor.check.discover import SKIPPED_FOLDERS
from stream_doctor.config.expectations import is_sidecar
from stream_doctor.config.file import FILE_NAMES
from stream_doctor.scan import ScanError

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

    from stream_doctor.values.command_options import ScanOptions

Key = tuple[str, "int | None"]

#: A batch of files holds at most this many bytes (a bigger file is a batch of its own).
MAX_BATCH_BYTES = 64 * 1024 * 1024
#: The default batch size: about this many batches per worker, for balance, within these bounds.
BATCHES_PER_WORKER = 8
MIN_BATCH, MAX_BATCH = 1, 500
#: A JSONL table's line index keeps one offset per this many lines.
LINE_GRANULE = 16
_GLOB_CHARS = frozenset("*?[")
PARQUET_SUFFIXES = (".parquet", ".pq")


@dataclass(frozen=True, slots=True)
class FileRef:
    url: str  # what fsspec opens, protocol included
    label: str  # what the outputs show: a path relative to the working directory, or the URL
    size: int
    named: bool  # named on the command line: replayed even when its first bytes are not recognised


@dataclass(frozen=True, slots=True)
class TableRef:
    url: str
    label: str
    kind: Literal["parquet", "jsonl", "jsonl-compressed"]


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of rows a worker reads at once: a Parquet row group, or a span of JSONL bytes."""

    first_row: int
    rows: int
    row_group: int | None = None  # Parquet
    start: int = 0  # JSONL: byte range of the span
    end: int = -1


@dataclass(frozen=True)
class Batch:
    """One Dask task: files, or segments of one table."""

    number: int
    count: int  # captures in it
    files: tuple[FileRef, ...] = ()
    table: TableRef | None = None
    segments: tuple[Segment, ...] = ()
    only: frozenset[int] | None = None  # only these rows of the segments (a sample, or what --resume lacks)
    broken: tuple[tuple[str, str], ...] = ()  # tables that cannot be read: (label, why, one line)


@dataclass(frozen=True)
class Plan:
    batches: tuple[Batch, ...]
    total: int  # captures to scan now
    already: int  # captures --resume found in the outputs
    listed: int  # captures found before --sample and --resume
    ignored: int = 0  # rows of the --resume status table ignored: not about the input, or of the wrong types


@dataclass
class _Table:
    ref: TableRef
    segments: list[Segment] = field(default_factory=list)


@dataclass(frozen=True)
class Listing:
    """Every capture of the inputs, before --sample and --resume: what ``holds`` checks a key against."""

    files: list[FileRef]
    tables: list[_Table]
    broken: list[tuple[str, str]]  # tables that cannot be read: (label, why)
    rows: dict[str, int]  # table label -> its rows (numbered 0 to rows - 1)
    names: frozenset[str]  # the labels of the files and of the broken tables (keys with no row)

    @property
    def count(self) -> int:
        return len(self.files) + len(self.broken) + sum(self.rows.values())

    def holds(self, source: object, row: object) -> bool:
        """Whether ``(source, row)`` is a capture of the input (as the outputs' columns give it)."""
        if not isinstance(source, str):
            return False
        if row is None:
            return source in self.names
        return type(row) is int and 0 <= row < self.rows.get(source, 0)


def listing(options: ScanOptions) -> Listing:
    """Expand the inputs into files and tables (ScanError when an input names nothing)."""
    files: list[FileRef] = []
    tables: list[_Table] = []
    broken: list[tuple[str, str]] = []
    for given in options.inputs:
        for ref, fs in _expand(given, tables_wanted=options.body_column is not None):
            if isinstance(ref, FileRef):
                files.append(ref)
                continue
            try:
                tables.append(_Table(ref, list(_segments(ref, fs, options))))
            except _Unreadable as error:
                broken.append((ref.label, str(error)))
    files = sorted({f.label: f for f in files}.values(), key=lambda f: f.label)
    broken = sorted(dict(broken).items())
    rows: dict[str, int] = {}
    for table in tables:
        rows[table.ref.label] = rows.get(table.ref.label, 0) + sum(s.rows for s in table.segments)
    names = frozenset(f.label for f in files) | {label for label, _ in broken}
    found = Listing(files, tables, broken, rows, names)
    if found.count == 0:
        raise ScanError(f"no captures found in {', '.join(options.inputs)}")
    return found


def plan(options: ScanOptions, done: set[Key], workers: int, found: Listing | None = None, ignored: int = 0) -> Plan:
    """Expand the inputs (unless ``found`` is their listing), keep the sample and what is not done, and
    cut into batches; ``ignored`` is what ``--resume`` would not trust, passed on to be said."""
    if found is None:
        found = listing(options)
    files, tables = found.files, found.tables
    listed = len(files) + sum(s.rows for t in tables for s in t.segments)
    chosen = _sample(listed, options.sample, options.seed)
    keep_files: list[FileRef] = []
    keep_rows: list[tuple[_Table, Segment, frozenset[int] | None]] = []
    index = 0
    already = 0
    for ref in files:
        if chosen is None or index in chosen:
            if (ref.label, None) in done:
                already += 1
            else:
                keep_files.append(ref)
        index += 1
    for table in tables:
        for segment in table.segments:
            rows = range(segment.first_row, segment.first_row + segment.rows)
            picked = [r for i, r in enumerate(rows, index) if i in chosen] if chosen is not None else None
            index += segment.rows
            candidates = picked if picked is not None else rows
            wanted = [r for r in candidates if (table.ref.label, r) not in done] if done else None
            if wanted is not None:
                already += len(candidates) - len(wanted)
            selection = wanted if wanted is not None else picked
            if selection is None:
                keep_rows.append((table, segment, None))
            elif selection:
                keep_rows.append((table, segment, frozenset(selection)))
    broken = tuple(item for item in found.broken if (item[0], None) not in done)  # always scanned: never sampled
    already += len(found.broken) - len(broken)
    total = len(keep_files) + sum(s.rows if only is None else len(only) for _, s, only in keep_rows) + len(broken)
    size = options.batch_size or max(MIN_BATCH, min(MAX_BATCH, total // max(1, workers * BATCHES_PER_WORKER)))
    batches = list(_file_batches(keep_files, size))
    batches += _table_batches(keep_rows, size, len(batches))
    if broken:
        batches.append(Batch(len(batches), len(broken), broken=broken))
    return Plan(tuple(batches), total, already, listed + len(found.broken), ignored)


def _sample(listed: int, sample: int | None, seed: int) -> set[int] | None:
    if sample is None or sample >= listed:
        return None
    return set(random.Random(seed).sample(range(listed), sample))


def _file_batches(files: list[FileRef], size: int) -> Iterable[Batch]:
    batch: list[FileRef] = []
    held = 0
    number = 0
    for ref in files:
        if batch and (len(batch) >= size or held + ref.size > MAX_BATCH_BYTES):
            yield Batch(number, len(batch), files=tuple(batch))
            number += 1
            batch, held = [], 0
        batch.append(ref)
        held += ref.size
    if batch:
        yield Batch(number, len(batch), files=tuple(batch))


def _table_batches(
    segments: list[tuple[_Table, Segment, frozenset[int] | None]], size: int, number: int
) -> list[Batch]:
    batches: list[Batch] = []
    current: list[Segment] = []
    table: _Table | None = None
    only: set[int] | None = None
    count = 0

    def flush() -> None:
        nonlocal current, only, count
        if current and table is not None:
            batches.append(
                Batch(number + len(batches), count, table=table.ref, segments=tuple(current), only=_frozen(only))
            )
        current, only, count = [], None, 0

    for owner, segment, rows in segments:
        if owner is not table or count >= size:
            flush()
            table = owner
        if rows is not None or only is not None:
            if only is None:  # the segments so far were whole: name their rows too
                only = {r for s in current for r in range(s.first_row, s.first_row + s.rows)}
            only |= set(rows) if rows is not None else set(range(segment.first_row, segment.first_row + segment.rows))
        current.append(segment)
        count += segment.rows if rows is None else len(rows)
    flush()
    return batches


def _frozen(rows: set[int] | None) -> frozenset[int] | None:
    return None if rows is None else frozenset(rows)


def _expand(given: str, tables_wanted: bool) -> Iterable[tuple[FileRef | TableRef, AbstractFileSystem]]:
    import fsspec

    try:
        fs, root = fsspec.core.url_to_fs(given)
    except (ImportError, ValueError) as error:  # an unknown protocol, or one whose package is missing
        raise ScanError(f"{given}: {error}") from None
    local = _is_local(fs)
    try:
        if _GLOB_CHARS & set(given):
            try:
                matches = sorted(fs.glob(root))
            except ValueError as error:  # fsspec: "Invalid pattern: '**' can only be an entire path component"
                raise ScanError(f"{given}: {error}") from None
            if not matches:
                raise ScanError(f"{given}: the pattern matches no file")
            for match in matches:
                yield from _entries(fs, match, local, tables_wanted, named=False)
        elif fs.isdir(root):
            yield from _entries(fs, root, local, tables_wanted, named=False)
        elif fs.exists(root):
            yield from _entries(fs, root, local, tables_wanted, named=True)
        else:
            raise ScanError(f"{given}: no such file or folder")
    except OSError as error:
        raise ScanError(f"{given}: cannot list it: {error}") from None


def _entries(
    fs: AbstractFileSystem, path: str, local: bool, tables_wanted: bool, named: bool
) -> Iterable[tuple[FileRef | TableRef, AbstractFileSystem]]:
    if fs.isdir(path):
        found = fs.find(path, detail=True)
        items = [(p, info) for p, info in sorted(found.items()) if not _hidden(p[len(path) :])]
    else:
        items = [(path, fs.info(path))]
    for item, info in items:
        label = _label(fs, item, local)
        if tables_wanted:
            kind: Literal["parquet", "jsonl", "jsonl-compressed"]
            if item.endswith(PARQUET_SUFFIXES):
                kind = "parquet"
            elif item.endswith((".gz", ".bz2", ".xz", ".zst")):
                kind = "jsonl-compressed"
            else:
                kind = "jsonl"
            yield TableRef(fs.unstrip_protocol(item), label, kind), fs
            continue
        name = item.rsplit("/", 1)[-1]
        if not named and (is_sidecar(name) or name in FILE_NAMES):
            continue  # stream-doctor's own files, as `check` leaves them
        if item.endswith(PARQUET_SUFFIXES) and named:
            raise ScanError(f"{label}: a Parquet table: name the column that holds the bodies with --body-column")
        yield FileRef(fs.unstrip_protocol(item), label, int(info.get("size") or 0), named), fs


def _hidden(relative: str) -> bool:
    parts = [p for p in relative.split("/") if p][:-1]
    return any(p.startswith(".") or p in SKIPPED_FOLDERS for p in parts)


def _is_local(fs: AbstractFileSystem) -> bool:
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return protocol in ("file", "local")


def _label(fs: AbstractFileSystem, path: str, local: bool) -> str:
    """Local files as ``check`` shows them (relative, "/"), others as their URL."""
    if not local:
        return str(fs.unstrip_protocol(path))
    import os
    from pathlib import Path

    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:
        return Path(path).as_posix()


class _Unreadable(Exception):
    """A table that cannot be listed: its one-line reason."""


def _segments(ref: TableRef, fs: AbstractFileSystem, options: ScanOptions) -> Iterable[Segment]:
    if ref.kind == "parquet":
        yield from _parquet_segments(ref, fs, options)
        return
    try:
        if ref.kind == "jsonl":
            yield from _jsonl_segments(ref, fs, options)
        else:
            yield Segment(0, _count_lines(ref), start=0, end=-1)  # read whole, streamed: not seekable
    except Exception as error:  # noqa: BLE001 - OSError, or a decompressor's own error (lzma, zstd)
        raise _Unreadable(f"cannot read the table: {_one_line(error)}") from None


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _parquet_segments(ref: TableRef, fs: AbstractFileSystem, options: ScanOptions) -> Iterable[Segment]:
    import pyarrow.parquet as pq

    try:
        with fs.open(ref.url) as file:
            metadata = pq.ParquetFile(file).metadata
            schema = metadata.schema.to_arrow_schema()
    except Exception as error:  # noqa: BLE001 - pyarrow's errors have no common base worth naming
        raise _Unreadable(f"not a readable Parquet table: {_one_line(error)}") from None
    wanted = [options.body_column, options.id_column, options.model_column, *options.meta_columns]
    missing = [name for name in wanted if name is not None and name not in schema.names]
    if missing:
        raise ScanError(f"{ref.label}: no column {missing[0]!r} (columns: {', '.join(schema.names)})")
    first = 0
    for group in range(metadata.num_row_groups):
        rows = metadata.row_group(group).num_rows
        if rows:
            yield Segment(first, rows, row_group=group)
        first += rows


def _jsonl_segments(ref: TableRef, fs: AbstractFileSystem, options: ScanOptions) -> Iterable[Segment]:
    """One pass over the bytes: the offset of every ``LINE_GRANULE``-th line (8 bytes per granule)."""
    starts = array("q", [0])
    lines = 0
    offset = 0
    last = b"\n"
    with fs.open(ref.url, "rb") as file:
        while chunk := file.read(4 * 1024 * 1024):
            position = 0
            while (newline := chunk.find(b"\n", position)) != -1:
                lines += 1
                position = newline + 1
                if lines % LINE_GRANULE == 0:
                    starts.append(offset + position)
            offset += len(chunk)
            last = chunk[-1:]
    if last != b"\n":
        lines += 1  # a last line without its newline
    for number, start in enumerate(starts):
        first = number * LINE_GRANULE
        rows = min(LINE_GRANULE, lines - first)
        if rows <= 0:
            break
        end = starts[number + 1] if number + 1 < len(starts) else offset
        yield Segment(first, rows, start=start, end=end)


def _count_lines(ref: TableRef) -> int:
    import fsspec

    lines = 0
    last = b"\n"
    with fsspec.open(ref.url, "rb", compression="infer") as file:
        while chunk := file.read(4 * 1024 * 1024):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (0 if last == b"\n" else 1)
