"""YAML read as plain data and nothing more: the hardening of the cassette reader (``vcr.py``).

PyYAML's safe loader only (libyaml's when it is there): no tag can build an object. The Python
tags vcrpy's default (unsafe) dumper writes are mapped to plain data (``!!python/unicode``/``str``
to text, ``!!python/bytes`` and Ruby's ``!binary`` to bytes, ``!!python/tuple`` to a list,
``!!python/object/apply:`` of a known header or dict class to a mapping, of multidict's ``istr`` to
its text); any other tag is an error naming its line. What base64 scalars decode to is taken from the
capture's budget first. Before the composer (recursive, in C: 50,000 levels crash the process) sees a
document, ``prescan`` passes over libyaml's event stream and
refuses nesting deeper than ``MAX_DEPTH`` and aliases that expand it past ``expansion_limit``
bytes ("billion laughs"); it also says where each interaction is, when loading each alone is
provably what loading the whole gives it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from stream_doctor.capture.base import CaptureError

BINARY = "tag:yaml.org,2002:binary"

#: How deep a cassette may nest (a real one: about 10 levels, 20 with a JSON body kept as YAML).
MAX_DEPTH = 256

_PYTHON = "tag:yaml.org,2002:python/"
#: ``!!python/object/apply:`` classes that recorders' headers and bodies are: dict-like containers
#: whose arguments are plain data (pairs or a mapping). Nothing is imported or called: the node is
#: read as the data it holds.
_MAPPING_CLASSES = frozenset(
    {
        "collections.OrderedDict",
        "requests.structures.CaseInsensitiveDict",
        "urllib3._collections.HTTPHeaderDict",
        "urllib3.response.HTTPHeaderDict",
        "multidict._multidict.CIMultiDict",
        "multidict._multidict.CIMultiDictProxy",
        "multidict._multidict.MultiDict",
        "httpx.Headers",
        "email.message.Message",
        "http.client.HTTPMessage",
    }
)


#: ``!!python/object/apply:`` classes that are ``str`` subclasses: aiohttp's header names are multidict's
#: case-insensitive ``istr``, which vcrpy's dumper writes as ``? !!python/object/apply:multidict._multidict.istr``
#: over a one-item list, the name (pydantic-ai's and dd-trace-py's aiohttp cassettes). Read as that text.
_TEXT_CLASSES = frozenset({"multidict._multidict.istr", "multidict.istr"})


@lru_cache(maxsize=1)
def safe_loader() -> Any:
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class CassetteLoader(base):  # type: ignore[misc, valid-type]
        """The safe loader, plus the Python tags vcrpy writes, each read as the plain data it holds."""

        def construct_undefined(self, node: Any) -> Any:
            tag = node.tag.replace("tag:yaml.org,2002:", "!!")
            raise yaml.constructor.ConstructorError(
                None, None, f"unknown YAML tag {tag!r} (cassettes are read as plain data only)", node.start_mark
            )

        def construct_python_bytes(self, node: Any) -> bytes:
            return bytes(self.construct_yaml_binary(node))

        def construct_yaml_binary(self, node: Any) -> bytes:
            # what it decodes to (3/4 of the base64 text) is taken from the capture's budget before decoding
            budget = getattr(self, "budget", None)
            if budget is not None and isinstance(node.value, str):
                budget.take(_decoded_size(node.value))
            return bytes(super().construct_yaml_binary(node))

        def construct_python_tuple(self, node: Any) -> list[Any]:
            return list(self.construct_sequence(node))

        def construct_python_apply(self, suffix: str, node: Any) -> Any:
            if suffix in _TEXT_CLASSES:
                return _as_text(self, node)
            if suffix not in _MAPPING_CLASSES:
                return self.construct_undefined(node)
            return _as_mapping(self, node)

    for tag in ("unicode", "str"):
        CassetteLoader.add_constructor(_PYTHON + tag, base.construct_yaml_str)
    CassetteLoader.add_constructor(BINARY, CassetteLoader.construct_yaml_binary)
    CassetteLoader.add_constructor(_PYTHON + "bytes", CassetteLoader.construct_python_bytes)
    # Ruby's VCR: Psych writes every body that is not valid UTF-8 text (an event stream, gzip, SSE
    # whose encoding is ASCII-8BIT) as the local tag ``!binary`` over base64 lines
    CassetteLoader.add_constructor("!binary", CassetteLoader.construct_python_bytes)
    CassetteLoader.add_constructor(_PYTHON + "tuple", CassetteLoader.construct_python_tuple)
    CassetteLoader.add_constructor(None, CassetteLoader.construct_undefined)
    CassetteLoader.add_multi_constructor(_PYTHON + "object/apply:", CassetteLoader.construct_python_apply)
    CassetteLoader.add_multi_constructor(_PYTHON + "object/new:", CassetteLoader.construct_python_apply)
    return CassetteLoader


def _as_text(loader: Any, node: Any) -> str:
    """``!!python/object/apply:multidict._multidict.istr [name]`` as the name: its one argument, a plain
    scalar; any other shape is refused as an unknown tag."""
    import yaml

    value = node.value
    if isinstance(node, yaml.SequenceNode) and len(value) == 1 and isinstance(value[0], yaml.ScalarNode):
        text = loader.construct_object(value[0])
        if isinstance(text, str):
            return text
    return loader.construct_undefined(node)  # type: ignore[no-any-return]


def _as_mapping(loader: Any, node: Any) -> dict[Any, Any]:
    """``!!python/object/apply:collections.OrderedDict`` and its kin as a dict: from ``[[pairs]]``,
    ``[{mapping}]`` or ``{args: …, dictitems: …}``."""
    import yaml

    if isinstance(node, yaml.SequenceNode):
        args, items = loader.construct_sequence(node, deep=True), None
    elif isinstance(node, yaml.MappingNode):
        spec = loader.construct_mapping(node, deep=True)
        args, items = spec.get("args") or [], spec.get("dictitems") or spec.get("state")
    else:
        args, items = [], None
    result: dict[Any, Any] = {}
    for source in ([args[0]] if args else []) + ([items] if items is not None else []):
        if isinstance(source, dict):
            result.update(source)
        elif isinstance(source, list):
            for pair in source:
                if isinstance(pair, (list, tuple)) and len(pair) == 2:
                    key, value = pair
                    result[key if not isinstance(key, (list, dict)) else str(key)] = value
    return result


def _decoded_size(text: str) -> int:
    """How many bytes base64 text decodes to, at most: 3/4 of it, line breaks and indentation left out."""
    return (len(text) - text.count("\n") - text.count(" ")) * 3 // 4


#: The tags whose scalar is base64 text decoded to bytes.
BINARY_TAGS = frozenset({BINARY, "!binary", _PYTHON + "bytes"})

# A JSON string may hold DEL, the C1 controls and U+FFFE/U+FFFF raw (RFC 8259 section 7 asks only
# C0 to be escaped; Ruby's JSON.generate and vcrpy's json serializer leave them as they are), where
# YAML's reader refuses them as non-printable (YAML 1.1 section 5.1; libyaml and PyYAML alike, NEL
# U+0085 excepted). In a JSON document they can only stand inside a string, which YAML reads as a
# double-quoted scalar: written as the \u escape both languages read, they mean the same text.
_JSON_UNPRINTABLE = re.compile(rb"\x7f|\xc2[\x80-\x84\x86-\x9f]|\xef\xbf[\xbe\xbf]")


def json_printable(data: bytes) -> bytes:
    """A JSON document's characters YAML refuses, written as ``\\uXXXX`` escapes (the same strings).

    A line's columns after such a character move by the escape's extra bytes; its line does not."""
    if not _JSON_UNPRINTABLE.search(data):
        return data
    return _JSON_UNPRINTABLE.sub(lambda m: b"\\u%04x" % ord(m.group().decode("utf-8")), data)


def expansion_limit(size: int) -> int:
    """How many bytes a cassette's scalars may add up to once aliases are expanded: its own size and
    some room (a real cassette has no alias, or a few small ones), never more than the capture limit."""
    from stream_doctor.capture.limits import current

    return min(current().max_bytes, 2 * size + (64 << 20))


#: Line breaks other than LF that libyaml counts (CR, NEL, LS, PS): the cassette's lines are then not
#: its LF-ended lines, and it is loaded whole.
_OTHER_BREAKS = (b"\r", b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")
_ITEM_DASH = re.compile(rb"[ ]*-[ ]+\Z")


def prescan(data: bytes, split: bool = False) -> list[tuple[int, int, int]] | None:
    """Refuse, on libyaml's event stream (iterative; nothing is composed), a document nested deeper
    than ``MAX_DEPTH``, whose aliases expand it past ``expansion_limit`` bytes, or whose base64 scalars
    decode past what the capture may still hold.

    A long binary block scalar (what vcrpy and Psych write) is measured on the file's bytes and left
    out of the event pass (``_elided``): libyaml would hold its text twice, in its buffer and as the
    event's string, before its length could refuse it. When the events do not confirm a block where
    the bytes said it is, the pass is run again over the file itself.

    With ``split``, also say where each item of the root's ``interactions`` (or ``http_interactions``)
    list is, as ``(first line (0-based), start byte, end byte)``: whole lines from the item's ``-`` to the
    next item's, so that each can be loaded alone and give what loading the whole document gives it.
    None when that cannot be proved from the events: an alias to an anchor of another item (or outside
    the list), several documents or directives, a root that is not a mapping, the key twice or both keys,
    a list in flow style, an item not starting its line with ``-``, line breaks other than LF.
    """
    import yaml

    blocks = _binary_blocks(data)
    if blocks:
        try:
            return _prescan(data, split, blocks)
        except (_Diverged, yaml.YAMLError):
            pass  # not the document the bytes suggested (or not a readable one): read it as it is
    return _prescan(data, split, [])


def _prescan(data: bytes, split: bool, blocks: list[_Block]) -> list[tuple[int, int, int]] | None:
    import yaml

    stream: Any = _Elided(data, blocks) if blocks else data
    events = yaml.parse(stream, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    guard = _Guard(data)
    layout = _Layout(split and not any(brk in data for brk in _OTHER_BREAKS))
    pending = 0  # the first block the events have not confirmed yet
    for event in events:
        kind = type(event)
        elided = _confirmed(event, kind, blocks[pending]) if pending < len(blocks) else None
        pending += elided is not None
        if layout.provable:
            layout.see(event, kind, len(guard.stack))
        guard.see(event, kind, elided)
    return layout.spans(data)


def _confirmed(event: Any, kind: type, block: _Block) -> _Block | None:
    """``block`` when ``event`` is the binary scalar it elided; None when the events have not reached it yet;
    _Diverged when they went past it (the elided text did not read as the block it was taken for)."""
    import yaml

    mark = (event.start_mark.line, event.start_mark.column)
    if mark == (block.line, block.column) and kind is yaml.ScalarEvent and event.tag in BINARY_TAGS:
        return block
    if mark >= (block.line, block.column):
        raise _Diverged
    return None


class _Guard:
    """What a cassette's events would make once composed, refused before the composer sees them: nesting
    deeper than ``MAX_DEPTH``, aliases that expand it past ``expansion_limit``, base64 scalars that decode
    past the capture's limit."""

    __slots__ = ("limit", "sizes", "stack", "expanded", "limits", "binary_room")

    def __init__(self, data: bytes) -> None:
        from stream_doctor.capture.limits import current

        self.limit = expansion_limit(len(data))
        self.sizes: dict[str, int] = {}  # anchor -> its node's expanded size
        self.stack: list[list[Any]] = [[0, None]]  # [expanded size so far, anchor] per open collection
        self.expanded = 0
        self.limits = current()
        self.binary_room = self.limits.max_bytes - len(data)  # what the base64 scalars may decode to, together

    def see(self, event: Any, kind: type, elided: _Block | None) -> None:
        import yaml

        stack = self.stack
        if kind is yaml.ScalarEvent:
            size = self._scalar(event, elided)
            stack[-1][0] += size
            self.expanded += size
            if event.anchor is not None:
                self.sizes[event.anchor] = size
        elif kind is yaml.AliasEvent:
            size = self.sizes.get(event.anchor, 1)
            stack[-1][0] += size
            self.expanded += size
            if self.expanded > self.limit:
                raise CaptureError(
                    f"not a cassette: its YAML aliases expand it to more than {self.limit:,} bytes",
                    line=event.start_mark.line + 1,
                )
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            stack.append([1, event.anchor])
            if len(stack) > MAX_DEPTH + 1:
                raise CaptureError(
                    f"not a cassette: its YAML nests deeper than {MAX_DEPTH} levels", line=event.start_mark.line + 1
                )
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            size, anchor = stack.pop()
            stack[-1][0] += size
            if anchor is not None:
                self.sizes[anchor] = size

    def _scalar(self, event: Any, elided: _Block | None) -> int:
        """A scalar's expanded size; a base64 one refused by its text's length, before anything is decoded."""
        from stream_doctor.capture.limits import too_big

        size = len(event.value) + 1
        if event.tag in BINARY_TAGS:
            decoded = _decoded_size(event.value)
            if elided is not None:  # its text measured on the bytes, less the stand-in's
                size += elided.end - elided.start
                decoded += elided.decoded - _decoded_size(_STAND_IN)
            self.binary_room -= decoded
            if self.binary_room < 0:
                error = too_big(self.limits, compressed=True)
                error.line = event.start_mark.line + 1
                raise error
        return size


class _Layout:
    """Where a cassette's interactions are, from its events, while loading each alone is provably what
    loading the whole gives it (``provable``): one plain document whose root mapping holds one block
    list of interactions, and no alias to an anchor outside the item it is in."""

    __slots__ = ("provable", "documents", "keys", "key", "found", "sequence_depth", "starts", "anchored", "end")

    def __init__(self, provable: bool) -> None:
        self.provable = provable
        self.documents = 0
        self.keys = 0  # root mapping: how many of its child nodes have started (even: a key comes next)
        self.key: str | None = None  # the root key whose value is being read
        self.found: str | None = None  # the interactions key, once its list is found
        self.sequence_depth = 0  # the depth of the interactions list while it is read
        self.starts: list[tuple[int, int]] = []  # (line, column) of each item's first event
        self.anchored: dict[str, int] = {}  # anchor -> the item (1-based; 0: outside the list) that defines it
        self.end: tuple[int, int] | None = None  # where the list ends

    def see(self, event: Any, kind: type, depth: int) -> None:
        """The next event, at ``depth`` (of the node it starts; for an end, of its collection + 1)."""
        import yaml

        if kind is yaml.DocumentStartEvent:
            self.documents += 1
            self.provable = self.documents == 1 and event.version is None and not event.tags
        elif depth == 1 and kind in (yaml.ScalarEvent, yaml.SequenceStartEvent):
            self.provable = False  # the root is not a mapping
        elif depth == 2 and kind is not yaml.MappingEndEvent:
            self.keys += 1
            if self.keys % 2:  # a key of the root mapping
                self.key = event.value if kind is yaml.ScalarEvent else None
                if self.key in ("interactions", "http_interactions"):
                    self.provable = self.found is None
            elif self.key in ("interactions", "http_interactions"):  # its value
                self.found = self.key
                self.provable = kind is yaml.SequenceStartEvent and not event.flow_style
                self.sequence_depth = depth + 1
        elif depth == self.sequence_depth and self.found is not None and self.end is None:
            if kind is yaml.SequenceEndEvent:
                self.end = (event.start_mark.line, event.start_mark.column)
            elif kind is not yaml.MappingEndEvent:
                self.starts.append((event.start_mark.line, event.start_mark.column))
        if kind is yaml.AliasEvent or getattr(event, "anchor", None) is not None:
            # vcrpy's dumper anchors what it writes twice (headers): within one item, loading it alone is the same
            inside = self.sequence_depth and depth >= self.sequence_depth and self.end is None
            item = len(self.starts) if inside else 0
            if kind is yaml.AliasEvent:
                self.provable = item > 0 and self.anchored.get(event.anchor) == item
            else:
                self.anchored[event.anchor] = item

    def spans(self, data: bytes) -> list[tuple[int, int, int]] | None:
        """Each interaction's first line and its bytes' span, when loading each alone is provably the same."""
        if not self.provable or self.found is None or self.end is None:
            return None
        return _spans(data, self.starts, self.end)


#: A binary block scalar whose text is at least this long is measured on the bytes, not by libyaml.
ELIDE_AT = 1 << 20
#: What an elided block's first line becomes (its other lines become empty lines: lines and columns stay).
_STAND_IN = "AAAA"
_PIECE = 1 << 20
_BINARY_TAG = re.compile(rb"!(?:!binary|binary|!python/bytes)\b")
# ``key: [&anchor ]!!binary |`` at the start of its line (after sequence dashes): the form vcrpy, Psych and
# PyYAML write; a block with an indentation indicator or a comment after its header is left to libyaml
_BLOCK_HEADER = re.compile(
    rb"([ ]*(?:-[ ]+)*)[A-Za-z0-9_]+:[ ]+((?:&[A-Za-z0-9_-]+[ ]+)?!(?:!binary|binary|!python/bytes)[ ]+[|>][-+]?[ ]*\n)"
)
_CONTENT_INDENT = re.compile(rb"[ ]+(?=[^ \n])")


class _Diverged(Exception):
    """The event pass over ``_Elided`` bytes did not find a block where the bytes said it starts."""


@dataclass(frozen=True)
class _Block:
    """A binary block scalar found on the bytes: where its node starts (its anchor or tag: 0-based line,
    column), its text (``start``..``end``, whole lines), the indentation of that text, how many line breaks
    it holds and how many bytes it decodes to, at most (3/4 of what is not a space or a line break)."""

    line: int
    column: int
    start: int
    end: int
    indent: int
    breaks: int
    decoded: int


def _binary_blocks(data: bytes) -> list[_Block]:
    """The binary block scalars of ``data`` whose text is ``ELIDE_AT`` bytes or more, in order: each text
    runs from the line after its header while lines are indented as deep as its first or are blank, as
    libyaml reads a block scalar. A regular expression over the bytes, nothing decoded or copied whole."""
    blocks: list[_Block] = []
    at, line, counted = 0, 0, 0
    while found := _BINARY_TAG.search(data, at):
        at = found.end()
        line_start = data.rfind(b"\n", 0, found.start()) + 1
        header = _BLOCK_HEADER.match(data, line_start)
        if header is None or not header.start(2) <= found.start() < header.end(2):
            continue
        start = header.end()
        indent = _CONTENT_INDENT.match(data, start)
        key_column = len(header.group(1))
        if indent is None or len(indent.group()) <= key_column:
            continue  # no text, or not indented deeper than its key: libyaml's reading of it is left to libyaml
        depth = len(indent.group())
        ended = re.compile(rb"\n[ ]{0,%d}[^ \n]" % (depth - 1)).search(data, start)
        end = ended.start() + 1 if ended else len(data)
        at = end
        if end - start < ELIDE_AT:
            continue
        line += data.count(b"\n", counted, line_start)
        breaks, kept = 0, 0
        for piece_start in range(start, end, _PIECE):
            piece = data[piece_start : min(end, piece_start + _PIECE)]
            breaks += piece.count(b"\n")
            kept += len(piece.translate(None, b" \r\n"))
        blocks.append(_Block(line, header.start(2) - line_start, start, end, depth, breaks, kept * 3 // 4))
        line, counted = line + 1 + breaks, end  # the header's line break, then the text's
    return blocks


class _Elided:
    """``data`` read as a file, with each block's text replaced by ``_STAND_IN`` and as many line breaks as
    it held: the same events at the same lines and columns, but for the blocks' values."""

    def __init__(self, data: bytes, blocks: list[_Block]) -> None:
        view = memoryview(data)
        self.pieces: list[bytes | memoryview] = []
        at = 0
        for block in blocks:
            self.pieces += [
                view[at : block.start],
                b" " * block.indent + _STAND_IN.encode() + b"\n" * max(1, block.breaks),
            ]
            at = block.end
        self.pieces.append(view[at:])
        self.pieces.reverse()
        self.name = "<cassette>"

    def read(self, size: int = -1) -> bytes:
        while self.pieces:
            piece = self.pieces[-1]
            if not piece:
                self.pieces.pop()
                continue
            part = piece[: max(size, _PIECE)]
            self.pieces[-1] = piece[len(part) :]
            return bytes(part)
        return b""


def _spans(data: bytes, starts: list[tuple[int, int]], end: tuple[int, int]) -> list[tuple[int, int, int]] | None:
    """Each item's whole lines, ``(first line, start byte, end byte)``; None when an item does not start its
    line with its ``-`` or shares a line with the one before."""
    lines = [line for line, _ in starts]
    lines.append(end[0] + (1 if end[1] else 0))
    if any(a >= b for a, b in zip(lines, lines[1:], strict=False)):
        return None
    offsets = []
    line, offset = 0, 0
    for target in lines:
        while line < target and offset >= 0:  # one search (memchr) per line between item starts
            offset = data.find(b"\n", offset)
            offset = offset + 1 if offset >= 0 else -1
            line += 1
        offsets.append(offset if offset >= 0 else len(data))
    spans = []
    for index, (start_line, column) in enumerate(starts):
        start = offsets[index]
        if not _ITEM_DASH.match(data, start, start + column):
            return None
        spans.append((start_line, start, offsets[index + 1]))
    return spans


def yaml_error(exc: Any, line_shift: int = 0) -> CaptureError:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    line = mark.line + 1 + line_shift if mark else None
    if problem == "exceeded maximum nesting depth":
        # PyYAML 6.0.4's libyaml scanner stops flow nesting past 1,000 levels while reading ahead of the
        # parser, before the event pass sees level 257: the same refusal, in the same words
        return CaptureError(f"not a cassette: its YAML nests deeper than {MAX_DEPTH} levels", line=line)
    return CaptureError(f"not a readable cassette: {problem}", line=line)
