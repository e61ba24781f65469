"""What the recorder dialects share: the loose JSON of a recorded exchange read into an ``Exchange``, and
a response body placed in the file."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stream_doctor.capture.base import Exchange, Pos

if TYPE_CHECKING:
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.http_frames import Exchanges, Fixed

#: A dialect's places: where each JSON path it asked ``json_places`` for starts in the file.
Places = dict[Any, int]


def add(
    collected: Exchanges,
    source: Source,
    exchange: Exchange,
    value: dict[str, Any],
    payload: bytes | None,
    content_type: str | None,
    where: int | None,
    pos: Pos,
    recorded_encoding: str | None,
    encoded: bool = False,
) -> None:
    """One exchange whose body is one JSON value of the file at ``where`` (the request's ``pos`` when the
    body has no place); ``encoded``: the recorder stores the body as it came, still carrying its codings."""
    from stream_doctor.capture.http_frames import Fixed

    place = Fixed(source.line_of(where), where + 1) if where is not None else fixed(pos)
    compressed = payload is not None and (encoded or payload.startswith(b"\x1f\x8b"))
    encoding = recorded_encoding if compressed else None
    collected.add(exchange, value, payload, content_type, place, encoding, None if compressed else recorded_encoding)


def skipped(collected: Exchanges, number: int, pos: Pos, why: str) -> None:
    """An entry that is no exchange at all: counted, with why, and not replayed."""
    collected.add(Exchange(number, pos, None, None, None, None, skipped=why), {}, None, None, fixed(pos))


def fixed(pos: Pos) -> Fixed:
    from stream_doctor.capture.http_frames import Fixed

    return Fixed(pos.line, pos.offset)


def header_items(headers: Any) -> list[tuple[Any, Any]]:
    """Headers as a mapping, a list of ``{name, value}`` or of ``[name, value]``, as pairs."""
    if isinstance(headers, dict):
        return list(headers.items())
    if isinstance(headers, list):  # [{name, value}] or [[name, value]]
        pairs = []
        for item in headers:
            if isinstance(item, dict):
                pairs.append((item.get("name"), item.get("value")))
            elif isinstance(item, (list, tuple)) and len(item) == 2:
                pairs.append((item[0], item[1]))
        return pairs
    return []


def status(value: Any) -> int | None:
    """A status as a number, ``{"code", "message"}`` or ``"200 OK"``; None when it is none of those."""
    if isinstance(value, dict):
        value = value.get("code")
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.split() and value.split()[0].isdigit():
        return int(value.split()[0])
    return None


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
