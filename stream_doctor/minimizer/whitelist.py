"""What ``--redact`` lets stay in a written capture: a whitelist, applied to every byte of it.

Nothing of a capture is written as it came unless it is on the list: the protocol's words (the
values of ``type``, ``role``, ``event``, ``stop_reason`` … when they are one word), object keys,
numbers, booleans and nulls, the JSON punctuation and the framing's field names. Every other string
(user and model text, tool names and descriptions, argument values, ids past their provider
prefix, header values, URL query values and user-info, SSE comments and ``id:`` lines, text that
is not JSON) is masked by ``mask``: each letter and digit replaced, the rest kept, so the value
keeps its length (argument fragments still join into the same JSON) and its shape.

``mask`` is a function of the value alone, so one value is masked alike wherever it recurs (a
call's streamed input, its echo in the next request, the input the application ran, a tool's name
in its declaration and in its calls), and two values differ after masking as they did before (an
SD103 stays). It is idempotent: a masked value (its letters all from ``_ALPHABET``) is left as it
is, so redacting a redacted capture gives it back.
"""

from __future__ import annotations

import hashlib
import re
from typing import Callable, Iterable
from urllib.parse import urlsplit, urlunsplit

#: The letters a masked value is written in; a value whose letters and digits are all among them is masked.
_ALPHABET = "qxzj"
_UNMASKED = re.compile(rf"[^\W_{_ALPHABET}{_ALPHABET.upper()}]")
_UPPER = re.compile(r"[A-Z]")
_OTHER = re.compile(r"[^\W_A-Z]")  # every other letter and digit, in any script
_SIGNED = 8  # this many of a value's first letters and digits carry its digest, so that values stay apart
#: One word of a protocol (``message_start``, ``tool_calls``, ``image/png``, a schema's ``#/$defs/x``).
_WORD = re.compile(r"[\w.:/#$@+\-]{1,128}")
#: An id's provider prefix, a word and its separator (``toolu_``, ``call_``, ``fc_``, ``chatcmpl-``,
#: ``tooluse_``): kept when an id is masked or shortened, so it still reads as that provider's id.
ID_PREFIX = re.compile(r"[a-z]{1,12}[_-]")
#: The keys whose value names a tool: ``name`` (every provider's calls and declarations), the Vercel
#: AI SDK's ``toolName``, Ollama's ``tool_name`` (a result answers its call by the tool's name).
NAME_KEYS = frozenset({"name", "toolName", "tool_name"})
#: A JSON text's tokens: a string (perhaps cut at the end), a bare word or number.
_TOKEN = re.compile(r'"((?:[^"\\]|\\.?)*)("?)(\s*:)?|[^\W_]+', re.DOTALL)
_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}|\\.?", re.DOTALL)
#: An id whose rest is a number this short is the minimizer's own (``toolu_1``), kept.
_NUMBERED = 3
#: An id of lower-case hex digits (Mistral's 32), and how many of its last digits carry its digest.
_HEX_ID = re.compile(r"[0-9a-f]{16,}")
_HEX_SIGNED = 8
_SSE_FIELDS = frozenset({"event", "data", "id", "retry"})
_LITERALS = frozenset({"true", "false", "null"})
_NUMBER = re.compile(r"\d[\d.eE]*")


def is_id_key(key: str) -> bool:
    """Whether ``key``'s value is an id (``id``, ``call_id``, ``tool_use_id``, the AI SDK's ``toolCallId``)."""
    return key.lower().endswith("id")


def is_masked(text: str) -> bool:
    return _UNMASKED.search(text) is None


def mask(text: str) -> str:
    """``text`` with each letter and digit replaced by one of ``_ALPHABET`` (upper case for ASCII upper case),
    the first few chosen by its digest; the same length, the same punctuation and spaces."""
    if is_masked(text):
        return text
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=_SIGNED).digest()
    masked = list(_UPPER.sub("X", _OTHER.sub("x", text)))
    signed = 0
    for index, char in enumerate(masked):
        if char in "xX":
            letter = _ALPHABET[digest[signed] % len(_ALPHABET)]
            masked[index] = letter.upper() if char == "X" else letter
            signed += 1
            if signed == _SIGNED:
                break
    return "".join(masked)


def id_prefix(text: str, names: Iterable[str] = ()) -> str:
    """The prefix an id keeps: Cohere's ids are the called tool's name, ``_`` and a token
    (``get_weather_ozsb97fnejhu``), so with the capture's tool ``names`` given the longest name so
    followed is the prefix; else ``ID_PREFIX``'s word (``toolu_``); else none (Gemini's, Mistral's)."""
    named = max(
        (name for name in names if text.startswith(name + "_") and len(text) > len(name) + 1), key=len, default=""
    )
    if named:
        return named + "_"
    prefix = ID_PREFIX.match(text)
    return prefix.group() if prefix else ""


def mask_id(text: str) -> str:
    """An id masked past its provider prefix (``toolu_``, ``call_``): none of its own characters stay. An
    id of lower-case hex digits stays one (Mistral's capture is told by it): zeros, then its digest."""
    head = id_prefix(text)
    rest = text[len(head) :]
    if _HEX_ID.fullmatch(rest):
        kept = len(rest) - _HEX_SIGNED
        if rest[:kept] == "0" * kept:
            return text  # masked already
        digest = hashlib.blake2b(rest.encode(), digest_size=_HEX_SIGNED // 2).hexdigest()
        return head + "0" * kept + digest
    if not head:
        return mask(text)
    if rest.isdigit() and len(rest) <= _NUMBERED:  # the minimizer's own numbering (toolu_1): no one's data
        return text
    return head + mask(rest)


def is_word(text: str) -> bool:
    return _WORD.fullmatch(text) is not None


def mask_json_text(text: str) -> str:
    """JSON text (whole, cut, or any piece of it) with its keys, numbers and literals kept and every string
    value and bare word masked; the same length, so the pieces of a call's arguments still line up."""
    return _TOKEN.sub(_masked_token, text)


def _masked_token(match: re.Match[str]) -> str:
    whole = match.group()
    if not whole.startswith('"'):
        return whole if whole in _LITERALS or _NUMBER.fullmatch(whole) else mask(whole)
    if match.group(3) is not None and match.group(2):  # a key: what a schema and a rule look values up by
        return whole
    inner = match.group(1)
    return '"' + _masked_inner(inner) + match.group(2) + (match.group(3) or "")


def _masked_inner(inner: str) -> str:
    """A JSON string's text masked, its escapes kept (a ``\\u`` escape of a letter becomes one of ``x``)."""
    if "\\" not in inner:
        return mask(inner)
    out, at = [], 0
    for escape in _ESCAPE.finditer(inner):
        out.append(mask(inner[at : escape.start()]))
        code = escape.group()
        out.append("\\u0078" if code.startswith("\\u") and int(code[2:], 16) >= 0x20 else code)
        at = escape.end()
    out.append(mask(inner[at:]))
    return "".join(out)


def mask_url(url: str, kept_query: Iterable[str] = ("alt",)) -> str:
    """A URL with its scheme, host, port and path kept (the provider is read from them), its user-info
    dropped, its query values masked (but ``alt=sse``, which says the framing) and its fragment dropped."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return mask(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    kept = frozenset(kept_query)
    query = re.sub(
        r"([^&;=]*)(=?)([^&;]*)",
        lambda m: m.group(0) if m.group(1) in kept else m.group(1) + m.group(2) + mask(m.group(3)),
        parts.query,
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def mask_sse_text(text: str, data: Callable[[str], str]) -> str:
    """SSE text (an event block, or what comes before the first) with its field names and event names
    kept, comments and ``id:`` values masked, and each event's data given to ``data`` whole (its
    lines joined as the SSE decoder joins them, written back as one line when it had several)."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    pending: list[str] = []  # the data lines of the current event
    ending = "\n"

    def flush() -> None:
        if pending:
            out.extend(f"data: {piece}{ending}" for piece in data("\n".join(pending)).split("\n"))
            pending.clear()

    for line in lines:
        body = line.rstrip("\r\n")
        ending = line[len(body) :] or ending
        field, colon, value = body.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data" and colon:
            pending.append(value)
            continue
        flush()
        if not body:
            out.append(line)
        elif not field:
            out.append(":" + mask(body[1:]) + line[len(body) :])
        elif field in ("event", "retry") and is_word(value):
            out.append(line)
        elif field == "id":
            out.append(f"id{colon} {mask_id(value)}".rstrip() + line[len(body) :])
        else:  # a field's name is the protocol's (an unknown one is masked too: the decoder ignores it)
            name = field if field in _SSE_FIELDS else mask(field)
            out.append(f"{name}{colon} {mask(value)}".rstrip() + line[len(body) :])
    flush()
    return "".join(out)
