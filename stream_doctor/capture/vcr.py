"""VCR cassettes: the YAML (or JSON) files that vcrpy, pytest-recording and go-vcr record HTTP tests into.

vcrpy / pytest-recording: ``interactions[].request`` (``method``, ``uri``, ``headers`` as lists,
``body`` as text, bytes or null; pydantic-ai adds ``parsed_body``) and ``response`` (``status``,
``headers``, ``body.string`` as text or ``!!binary`` bytes, gzip-compressed when the recorder did
not decode it). go-vcr (versions 1 and 2): ``request.url``, ``request.body`` and
``response.body`` as plain strings, ``response.code``. Ruby's VCR (``http_interactions``, bodies
as ``string`` or ``base64_string``) is read the same way, and so are LangChain's standard-test
cassettes (``langchain-tests``' gzip YAML serializer: top-level ``requests:`` and ``responses:``
lists, paired by position).

The file is loaded with PyYAML's safe loader only (libyaml's when it is there): no tag can build
an object. The Python tags vcrpy's default (unsafe) dumper writes are mapped to plain data
(``!!python/unicode``/``str`` to text, ``!!python/bytes`` to bytes, ``!!python/tuple`` to a list,
``!!python/object/apply:`` of a known header or dict class to a mapping); any other tag is an
error naming its line. Before the composer (recursive, in C: 50,000 levels crash the process)
sees the file, a pass over libyaml's event stream refuses nesting deeper than ``MAX_DEPTH`` and
aliases that expand the document past ``expansion_limit`` bytes ("billion laughs"). Each interaction that is an LLM call becomes a request frame and its response body's
frames (see ``exchange``); positions point into the cassette: the body's own line for a literal
block (``|``), the line of the body's share for a quoted scalar, the body's first line otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from stream_doctor.capture.base import Capture, CaptureError, Exchange, Frame, InputProblem, Pos

if TYPE_CHECKING:
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.exchange import BodyPlace, Exchanges
    from stream_doctor.capture.limits import Budget

# vcrpy: a top-level "interactions:" key (vcrpy sorts keys, so it comes first); go-vcr: "---\nversion: N\ninteractions:".
_YAML_START = re.compile(
    rb"\A(?:\xef\xbb\xbf)?(?:[ \t]*(?:#[^\n]*)?\r?\n)*(?:---[ \t]*\r?\n)?(?:(?:version|recorded_with):[^\n]*\r?\n)?(?:http_)?interactions:"
)
# LangChain's standard tests: yaml.safe_dump of {"requests": [{body, headers, method, uri}], "responses": [...]}.
_LANGCHAIN_START = re.compile(rb"\A(?:\xef\xbb\xbf)?requests:\r?\n- (?:body|headers|method|uri):")
_JSON_START = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"(?:http_)?interactions"\s*:')
_BINARY = "tag:yaml.org,2002:binary"


def _sniff(head: bytes) -> tuple[int, str]:
    if _YAML_START.match(head) or _JSON_START.match(head):
        return 95, ""
    if _LANGCHAIN_START.match(head):
        return 90, ""
    return 0, "no top-level 'interactions:' (not a VCR cassette)"


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


@lru_cache(maxsize=1)
def _loader_class() -> Any:
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
            if suffix not in _MAPPING_CLASSES:
                return self.construct_undefined(node)
            return _as_mapping(self, node)

    for tag in ("unicode", "str"):
        CassetteLoader.add_constructor(_PYTHON + tag, base.construct_yaml_str)
    CassetteLoader.add_constructor(_BINARY, CassetteLoader.construct_yaml_binary)
    CassetteLoader.add_constructor(_PYTHON + "bytes", CassetteLoader.construct_python_bytes)
    # Ruby's VCR: Psych writes every body that is not valid UTF-8 text (an event stream, gzip, SSE
    # whose encoding is ASCII-8BIT) as the local tag ``!binary`` over base64 lines
    CassetteLoader.add_constructor("!binary", CassetteLoader.construct_python_bytes)
    CassetteLoader.add_constructor(_PYTHON + "tuple", CassetteLoader.construct_python_tuple)
    CassetteLoader.add_constructor(None, CassetteLoader.construct_undefined)
    CassetteLoader.add_multi_constructor(_PYTHON + "object/apply:", CassetteLoader.construct_python_apply)
    CassetteLoader.add_multi_constructor(_PYTHON + "object/new:", CassetteLoader.construct_python_apply)
    return CassetteLoader


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
_BINARY_TAGS = frozenset({_BINARY, "!binary", _PYTHON + "bytes"})


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
    than ``MAX_DEPTH`` or whose aliases expand it past ``expansion_limit`` bytes.

    With ``split``, also say where each item of the root's ``interactions`` (or ``http_interactions``)
    list is, as ``(first line (0-based), start byte, end byte)``: whole lines from the item's ``-`` to the
    next item's, so that each can be loaded alone and give what loading the whole document gives it.
    None when that cannot be proved from the events: an alias to an anchor of another item (or outside
    the list), several documents or directives, a root that is not a mapping, the key twice or both keys,
    a list in flow style, an item not starting its line with ``-``, line breaks other than LF.
    """
    import yaml

    events = yaml.parse(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    limit = expansion_limit(len(data))
    sizes: dict[str, int] = {}  # anchor -> its node's expanded size
    stack: list[list[Any]] = [[0, None]]  # [expanded size so far, anchor] per open collection
    expanded = 0
    provable = split and not any(brk in data for brk in _OTHER_BREAKS)
    documents = 0
    keys = 0  # root mapping: how many of its child nodes have started (even: a key comes next)
    key: str | None = None  # the root key whose value is being read
    found: str | None = None  # the interactions key, once its list is found
    sequence_depth = 0  # the depth of the interactions list while it is read
    starts: list[tuple[int, int]] = []  # (line, column) of each item's first event
    anchored: dict[str, int] = {}  # anchor -> the item (1-based; 0: outside the list) that defines it
    end: tuple[int, int] | None = None  # where the list ends
    from stream_doctor.capture.limits import current, too_big

    limits = current()
    binary_room = limits.max_bytes - len(data)  # what the file's base64 scalars may decode to, all together
    for event in events:
        kind = type(event)
        depth = len(stack)  # of the node this event starts (or, for an end, of its collection + 1)
        if provable:
            if kind is yaml.DocumentStartEvent:
                documents += 1
                provable = documents == 1 and event.version is None and not event.tags
            elif depth == 1 and kind in (yaml.ScalarEvent, yaml.SequenceStartEvent):
                provable = False  # the root is not a mapping
            elif depth == 2 and kind is not yaml.MappingEndEvent:
                keys += 1
                if keys % 2:  # a key of the root mapping
                    key = event.value if kind is yaml.ScalarEvent else None
                    if key in ("interactions", "http_interactions"):
                        provable = found is None
                elif key in ("interactions", "http_interactions"):  # its value
                    found = key
                    provable = kind is yaml.SequenceStartEvent and not event.flow_style
                    sequence_depth = depth + 1
            elif depth == sequence_depth and found is not None and end is None:
                if kind is yaml.SequenceEndEvent:
                    end = (event.start_mark.line, event.start_mark.column)
                elif kind is not yaml.MappingEndEvent and kind is not yaml.SequenceEndEvent:
                    starts.append((event.start_mark.line, event.start_mark.column))
            if kind is yaml.AliasEvent or getattr(event, "anchor", None) is not None:
                # vcrpy's dumper anchors what it writes twice (headers): within one item, loading it alone is the same
                item = len(starts) if sequence_depth and depth >= sequence_depth and end is None else 0
                if kind is yaml.AliasEvent:
                    provable = item > 0 and anchored.get(event.anchor) == item
                else:
                    anchored[event.anchor] = item
        if kind is yaml.ScalarEvent:
            size = len(event.value) + 1
            if event.tag in _BINARY_TAGS:  # refused by the text's length, before anything is decoded
                binary_room -= _decoded_size(event.value)
                if binary_room < 0:
                    raise too_big(limits, compressed=True)
            stack[-1][0] += size
            expanded += size
            if event.anchor is not None:
                sizes[event.anchor] = size
        elif kind is yaml.AliasEvent:
            size = sizes.get(event.anchor, 1)
            stack[-1][0] += size
            expanded += size
            if expanded > limit:
                raise CaptureError(
                    f"not a cassette: its YAML aliases expand it to more than {limit:,} bytes",
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
                sizes[anchor] = size
    if not provable or found is None or end is None:
        return None
    return _spans(data, starts, end)


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


def read_vcr(data: bytes, path: str) -> Capture:
    from stream_doctor.capture.exchange import Exchanges
    from stream_doctor.capture.limits import Budget

    collected = Exchanges(path, budget=Budget(used=len(data)))
    for _ in _read(data, collected):
        pass
    return collected.capture(READER.name, len(data))


def vcr_turns(data: bytes, path: str, capture: Capture) -> Iterator[tuple[Exchange, list[Frame], list[InputProblem]]]:
    """Each interaction as it is read: its exchange, frames and problems (also noted on ``capture``)."""
    from stream_doctor.capture.exchange import Exchanges
    from stream_doctor.capture.limits import Budget

    collected = Exchanges(path, budget=Budget(used=len(data)))
    for _ in _read(data, collected):
        exchange = collected.exchanges[-1]
        capture.exchanges.append(exchange)
        capture.problems += collected.problems
        yield exchange, collected.frames, collected.problems
        collected.frames, collected.problems = [], []


def _yaml_error(exc: Any, line_shift: int = 0) -> CaptureError:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    line = mark.line + 1 + line_shift if mark else None
    if problem == "exceeded maximum nesting depth":
        # PyYAML 6.0.4's libyaml scanner stops flow nesting past 1,000 levels while reading ahead of the
        # parser, before the event pass sees level 257: the same refusal, in the same words
        return CaptureError(f"not a cassette: its YAML nests deeper than {MAX_DEPTH} levels", line=line)
    return CaptureError(f"not a readable cassette: {problem}", line=line)


def _read(data: bytes, collected: Exchanges) -> Iterator[None]:
    """Each interaction added to ``collected`` (a yield after each). A cassette of the usual shape is
    cut into its interactions by the event pass that guards depth and aliases, and each is loaded
    alone, so memory follows the largest interaction; any other shape is loaded whole."""
    import yaml

    try:
        spans = prescan(data, split=True)
    except yaml.YAMLError as exc:
        raise _yaml_error(exc) from None
    if spans is None:
        yield from _read_whole(data, collected)
        return
    from stream_doctor.capture._text_places import Source

    loader_class = _loader_class()
    for number, (line, start, end) in enumerate(spans, 1):
        loader = loader_class(data[start:end])
        loader.budget = collected.budget
        try:
            root = loader.get_single_node()
            items = loader.construct_document(root) if root is not None else None
        except yaml.YAMLError as exc:
            raise _yaml_error(exc, line) from None
        finally:
            loader.dispose()
        if not isinstance(items, list) or len(items) != 1:  # the event pass said it would be one item
            raise CaptureError("not a readable cassette: an interaction could not be read alone", line=line + 1)
        _interaction(collected, Source(data[start:end]), number, items[0], root.value[0], (line, start))
        del items, root
        yield


def _read_whole(data: bytes, collected: Exchanges) -> Iterator[None]:
    import yaml

    from stream_doctor.capture._text_places import Source

    loader = None
    try:
        prescan(data)
        loader = _loader_class()(data)
        loader.budget = collected.budget
        root = loader.get_single_node()
        document = loader.construct_document(root) if root is not None else None
    except yaml.YAMLError as exc:
        raise _yaml_error(exc) from None
    finally:
        if loader is not None:
            loader.dispose()
    if isinstance(document, dict) and "interactions" not in document and _is_langchain(document):
        document, root = _langchain(document, root)
    if not isinstance(document, dict):
        raise CaptureError("not a cassette: the file is not a mapping with 'interactions'")
    key = "interactions" if "interactions" in document else "http_interactions"
    interactions = document.get(key)
    if not isinstance(interactions, list):
        raise CaptureError(f"not a cassette: '{key}' is not a list")
    items_node = _child(root, key)
    item_nodes = items_node.value if items_node is not None and isinstance(items_node.value, list) else []
    source = Source(data)
    for number, interaction in enumerate(interactions, 1):
        node = item_nodes[number - 1] if number - 1 < len(item_nodes) else None
        _interaction(collected, source, number, interaction, node)
        yield


def _is_langchain(document: dict[str, Any]) -> bool:
    return isinstance(document.get("requests"), list) and isinstance(document.get("responses"), list)


def _langchain(document: dict[str, Any], root: Any) -> tuple[dict[str, Any], Any]:
    """LangChain's ``{requests: [...], responses: [...]}`` as vcrpy's ``{interactions: [{request, response}]}``,
    with a node per interaction so that positions still point into the file."""
    import yaml

    request_nodes = getattr(_child(root, "requests"), "value", None) or []
    response_nodes = getattr(_child(root, "responses"), "value", None) or []
    interactions = []
    nodes = []
    for number, (request, response) in enumerate(zip(document["requests"], document["responses"], strict=False)):
        interactions.append({"request": request, "response": response})
        if number < len(request_nodes) and number < len(response_nodes):
            request_node, response_node = request_nodes[number], response_nodes[number]
            pairs = [
                (yaml.ScalarNode("tag:yaml.org,2002:str", "request"), request_node),
                (yaml.ScalarNode("tag:yaml.org,2002:str", "response"), response_node),
            ]
            nodes.append(yaml.MappingNode("tag:yaml.org,2002:map", pairs, request_node.start_mark))
    items = yaml.SequenceNode("tag:yaml.org,2002:seq", nodes)
    key = yaml.ScalarNode("tag:yaml.org,2002:str", "interactions")
    return {"interactions": interactions}, yaml.MappingNode("tag:yaml.org,2002:map", [(key, items)])


def _interaction(
    collected: Exchanges, source: Source, number: int, interaction: Any, node: Any, shift: tuple[int, int] = (0, 0)
) -> None:
    """One interaction; ``source`` holds the file from line ``shift[0]`` (0-based), byte ``shift[1]``."""
    from stream_doctor.capture.exchange import Fixed, header, is_llm_call, redact_headers, redact_url, request_body

    pos = _pos(source, node, shift) if node is not None else Pos(0, 1, 0)
    if not isinstance(interaction, dict):
        collected.add(
            Exchange(number, pos, None, None, None, None, skipped="not a request/response pair"),
            {},
            None,
            None,
            Fixed(pos.line, pos.offset),
        )
        return
    request = _dict(interaction.get("request"))
    response = _dict(interaction.get("response"))
    request_node = _child(node, "request")
    response_node = _child(node, "response")
    method = _text(request.get("method"))
    url = redact_url(_text(request.get("uri") or request.get("url") or ""))
    headers = redact_headers(_header_items(request.get("headers")))
    body_node = None
    if "parsed_body" in request:  # pydantic-ai's cassettes keep the JSON body as YAML
        body = request["parsed_body"]
        body_node = _child(request_node, "parsed_body")
    else:
        body = request_body(
            _body_value(request.get("body"), collected.budget), collected.budget, headers.get("content-encoding")
        )
    response_headers = redact_headers(_header_items(response.get("headers")))
    status = _status(response)
    content_type = header(response_headers, "content-type")
    skipped = is_llm_call(method, url, body, content_type)
    exchange = Exchange(number, pos, method, url, status, None, skipped=skipped)
    if body_node is not None:
        exchange.request_places.update(_places(source, body_node, shift))
    value = {"method": method, "url": url, "headers": headers, "body": body}
    raw, raw_node = _response_body(response, response_node, collected.budget)
    place = _place(source, raw_node, raw, pos, shift)
    # A text body was decoded by the recorder (vcrpy's decode_compressed_response); bytes may still be encoded.
    recorded = response_headers.get("content-encoding")  # every coding, in the order they were applied
    encoding = recorded if isinstance(raw, bytes) else None
    payload = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    collected.add(exchange, value, payload, content_type, place, encoding, recorded)


def _unbase64(text: str, budget: Budget) -> bytes | None:
    """Ruby VCR's ``base64_string`` decoded under the capture's budget (None when it is not base64)."""
    from stream_doctor.capture.exchange import unbase64

    return unbase64(text, budget)


def _response_body(response: dict[str, Any], node: Any, budget: Budget) -> tuple[str | bytes | None, Any]:
    body = response.get("body")
    body_node = _child(node, "body")
    if isinstance(body, dict):  # vcrpy / Ruby VCR: {"string": …} or {"base64_string": …}
        if isinstance(body.get("string"), (str, bytes)):
            return body["string"], _child(body_node, "string")
        if isinstance(body.get("base64_string"), str):
            return _unbase64(body["base64_string"], budget), None
        return None, None
    if isinstance(body, (str, bytes)):  # go-vcr
        return body, body_node
    content = response.get("content")
    if isinstance(content, (str, bytes)):  # vcrpy's httpx stubs (4.x): {status_code, http_version, headers, content}
        return content, _child(node, "content")
    return None, None


def _place(source: Source, node: Any, raw: Any, fallback: Pos, shift: tuple[int, int] = (0, 0)) -> BodyPlace:
    from stream_doctor.capture._text_places import quoted_places
    from stream_doctor.capture.exchange import Fixed, Folded, Lines

    if node is None or not hasattr(node, "start_mark"):
        return Fixed(fallback.line, fallback.offset)
    lines, offset = shift
    mark = node.start_mark
    line = mark.line + 1
    if node.tag in (_BINARY, "!binary") or not isinstance(raw, str) or node.id != "scalar":  # only a scalar has a style
        return Fixed(line + lines, source.byte_offset(mark.line, mark.column) + offset)
    if node.style == "|":
        first = mark.line + 1  # 0-based line of the block's first content line
        indent = 0
        for number in range(first, min(first + 50, len(source.starts))):
            text = source.data[
                source.starts[number] : source.starts[number + 1] if number + 1 < len(source.starts) else None
            ]
            if text.strip():
                indent = len(text) - len(text.lstrip(b" "))
                break
        return Lines(first + 1, source.starts, indent, lines, offset)
    if node.style in ('"', "'"):
        folded = quoted_places(source, mark.line, mark.column, raw)
        if folded is not None:
            if lines or offset:
                return Folded(
                    folded.body_offsets, [n + lines for n in folded.lines], [o + offset for o in folded.offsets]
                )
            return folded
    return Fixed(line + lines, source.byte_offset(mark.line, mark.column) + offset)


def _places(source: Source, node: Any, shift: tuple[int, int] = (0, 0), depth: int = 4) -> dict[str, Pos]:
    """Positions of the parts of a YAML request body, by JSON path (``messages[3].content[0]``), 4 levels deep."""
    found: dict[str, Pos] = {}

    def walk(current: Any, path: str, level: int) -> None:
        if level > depth:
            return
        if current.id == "mapping":
            for key_node, value_node in current.value:
                if key_node.id != "scalar":
                    continue
                child = f"{path}.{key_node.value}" if path else str(key_node.value)
                found[child] = _pos(source, value_node, shift)
                walk(value_node, child, level + 1)
        elif current.id == "sequence":
            for index, item in enumerate(current.value):
                child = f"{path}[{index}]"
                found[child] = _pos(source, item, shift)
                walk(item, child, level + 1)

    walk(node, "", 1)
    return found


def _pos(source: Source, node: Any, shift: tuple[int, int] = (0, 0)) -> Pos:
    mark = node.start_mark
    return Pos(0, mark.line + 1 + shift[0], source.byte_offset(mark.line, mark.column) + shift[1])


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _child(node: Any, key: str) -> Any:
    """The node of ``key``'s value in a mapping node: the last, when the key repeats, as the
    constructed mapping keeps the last value (the first may be a mapping where a string is read)."""
    if node is None or getattr(node, "id", None) != "mapping":
        return None
    found = None
    for key_node, value_node in node.value:
        if getattr(key_node, "value", None) == key:
            found = value_node
    return found


def _header_items(headers: Any) -> list[tuple[Any, Any]]:
    if isinstance(headers, dict):
        return list(headers.items())
    if isinstance(headers, list):  # [{name, value}] in some recorders
        return [(h.get("name"), h.get("value")) for h in headers if isinstance(h, dict)]
    return []


def _body_value(body: Any, budget: Budget) -> Any:
    if isinstance(body, dict):  # Ruby VCR: {"encoding": …, "string": …}
        if "string" in body:
            return body["string"]
        if isinstance(body.get("base64_string"), str):
            return _unbase64(body["base64_string"], budget)
    return body


def _status(response: dict[str, Any]) -> int | None:
    status = response.get("status", response.get("status_code"))
    if isinstance(status, dict):
        status = status.get("code")
    if status is None:
        status = response.get("code")
    if isinstance(status, str):
        status = status.split()[0] if status.split() else status
    try:
        return int(status) if status is not None else None
    except (TypeError, ValueError):
        return None


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


class VcrReader:
    """Reader for VCR cassettes (vcrpy, pytest-recording, go-vcr)."""

    name = "vcr"
    title = "VCR cassette (vcrpy, pytest-recording, go-vcr, LangChain standard tests)"

    def sniff(self, head: bytes) -> int:
        return _sniff(head)[0]

    def reject_reason(self, head: bytes) -> str:
        """Why ``sniff`` gave 0, for the "could not recognise" message."""
        return _sniff(head)[1]

    def read(self, data: bytes, path: str) -> Capture:
        return read_vcr(data, path)

    def turns(
        self, data: bytes, path: str, capture: Capture
    ) -> Iterator[tuple[Exchange, list[Frame], list[InputProblem]]]:
        """Each interaction as it is read (see ``vcr_turns``): the engine replays a turn and lets its frames go."""
        return vcr_turns(data, path, capture)


READER = VcrReader()
