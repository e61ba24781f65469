"""VCR cassettes: the YAML (or JSON) files that vcrpy, pytest-recording and go-vcr record HTTP tests into.

vcrpy / pytest-recording: ``interactions[].request`` (``method``, ``uri``, ``headers`` as lists,
``body`` as text, bytes or null; pydantic-ai adds ``parsed_body``) and ``response`` (``status``,
``headers``, ``body.string`` as text or ``!!binary`` bytes, gzip-compressed when the recorder did
not decode it). go-vcr (versions 1 and 2): ``request.url``, ``request.body`` and
``response.body`` as plain strings, ``response.code``. Ruby's VCR (``http_interactions``, bodies
as ``string`` or ``base64_string``) is read the same way, and so are LangChain's standard-test
cassettes (``langchain-tests``' gzip YAML serializer: top-level ``requests:`` and ``responses:``
lists, paired by position). opencode's HTTP recorder writes the go-vcr shape as JSON after a ``version``
and a ``metadata`` object, a body that is not text in base64 with ``"bodyEncoding": "base64"``.

The file is loaded as plain data only (``yaml_safe.py``: the safe loader, vcrpy's Python tags
mapped to the data they hold, any other tag an error naming its line, depth and aliases refused
before anything is composed). Each interaction that is an LLM call becomes a request frame and
its response body's frames (see ``exchange``); positions point into the cassette: the body's own
line for a literal block (``|``), the line of the body's share for a quoted scalar, the body's
first line otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from stream_doctor.capture.base import CaptureError, Exchange, Pos
from stream_doctor.capture.exchanges_reader import ExchangesReader
from stream_doctor.capture.starts.vcr import JSON_START, LANGCHAIN_START, YAML_START
from stream_doctor.capture.yaml_safe import BINARY, json_printable, prescan, safe_loader, yaml_error

if TYPE_CHECKING:
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.http_frames import BodyPlace, Exchanges
    from stream_doctor.capture.limits import Budget


def _sniff(head: bytes) -> tuple[int, str]:
    if YAML_START.match(head) or JSON_START.match(head):
        return 95, ""
    if LANGCHAIN_START.match(head):
        return 90, ""
    return 0, "no top-level 'interactions:' (not a VCR cassette)"


def _read(data: bytes, collected: Exchanges) -> Iterator[None]:
    """Each interaction added to ``collected`` (a yield after each). A cassette of the usual shape is
    cut into its interactions by the event pass that guards depth and aliases, and each is loaded
    alone, so memory follows the largest interaction; any other shape is loaded whole."""
    import yaml

    if JSON_START.match(data):
        data = json_printable(data)
    try:
        spans = prescan(data, split=True)
    except yaml.YAMLError as exc:
        raise yaml_error(exc) from None
    if spans is None:
        yield from _read_whole(data, collected)
        return
    from stream_doctor.capture._text_places import Source

    loader_class = safe_loader()
    for number, (line, start, end) in enumerate(spans, 1):
        loader = loader_class(data[start:end])
        loader.budget = collected.budget
        try:
            root = loader.get_single_node()
            items = loader.construct_document(root) if root is not None else None
        except yaml.YAMLError as exc:
            raise yaml_error(exc, line) from None
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
        loader = safe_loader()(data)
        loader.budget = collected.budget
        root = loader.get_single_node()
        document = loader.construct_document(root) if root is not None else None
    except yaml.YAMLError as exc:
        raise yaml_error(exc) from None
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
    from stream_doctor.capture.http_frames import Fixed, header, is_llm_call, redact_headers, request_body

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
    url = collected.redact_url(_text(request.get("uri") or request.get("url") or ""))
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
    exchange = Exchange(number, pos, method, url, status, None, skipped=skipped, response_headers=response_headers)
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
    from stream_doctor.capture.http_frames import unbase64

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
    if isinstance(body, str) and response.get("bodyEncoding") == "base64":
        # opencode's recorder keeps a body that is not text (Bedrock's event stream) as base64 beside a
        # "bodyEncoding" of "base64"; a text body has no "bodyEncoding".
        decoded = _unbase64(body, budget)
        if decoded is None:
            raise CaptureError('not a readable cassette: a response body marked "bodyEncoding": "base64" is not base64')
        return decoded, None
    if isinstance(body, (str, bytes)):  # go-vcr
        return body, body_node
    content = response.get("content")
    if isinstance(content, (str, bytes)):  # vcrpy's httpx stubs (4.x): {status_code, http_version, headers, content}
        return content, _child(node, "content")
    return None, None


def _place(source: Source, node: Any, raw: Any, fallback: Pos, shift: tuple[int, int] = (0, 0)) -> BodyPlace:
    from stream_doctor.capture._text_places import quoted_places
    from stream_doctor.capture.http_frames import Fixed, Folded, Lines

    if node is None or not hasattr(node, "start_mark"):
        return Fixed(fallback.line, fallback.offset)
    lines, offset = shift
    mark = node.start_mark
    line = mark.line + 1
    if node.tag in (BINARY, "!binary") or not isinstance(raw, str) or node.id != "scalar":  # only a scalar has a style
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


#: Reader for VCR cassettes (vcrpy, pytest-recording, go-vcr, LangChain's standard tests, opencode).
READER = ExchangesReader(
    "vcr", "VCR cassette (vcrpy, pytest-recording, go-vcr, LangChain standard tests)", _sniff, _read
)
