"""``--redact``: a minimized capture made fit to share, by a whitelist of what may stay (``whitelist``).

Every unit of the capture (whatever its framing: SSE text with its comments and ``id:`` lines, an
envelope's or a chunk log's JSON lines, a JSON array's elements, a line that is not JSON) and what
comes before and after them is rewritten in one linear pass: object keys, numbers, literals and the
protocol's one-word values stay; every other string is masked (``whitelist.mask``), the values of
headers and URL queries too, and a call's argument fragments are masked as the JSON text they join
into, so they still join. That candidate is replayed once. Only when a kept finding no longer
fires (or a new one appears) is one kind of value at a time let stay (argument values, names, ids,
user, model and other text), each one more replay, with every secret ``redaction.SecretRedactor`` knows
still masked in it; the kinds let stay are counted as kept. Redaction is thus a bounded number of
replays (one to read the calls' fragments, at most ``len(KINDS) + 2`` candidates) whatever the
capture's size and whatever the clock says: a secret is never left in because the search ran out
of time. When even that loses the finding (it depends on a secret), ``run()`` says so and
``minimize`` raises ``MinimizeError``: nothing is written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import orjson

from stream_doctor.minimizer.oracle import replay_quietly
from stream_doctor.minimizer.units import Layout, Unit
from stream_doctor.minimizer.whitelist import (
    NAME_KEYS,
    is_id_key,
    is_word,
    mask,
    mask_id,
    mask_json_text,
    mask_sse_text,
    mask_url,
)
from stream_doctor.rules.correlation.sd517_parallel_wrapper_call import WRAPPER_NAMES
from stream_doctor.util import jsontext
from stream_doctor.util.credentials import REDACTED, credential_values, is_secret_field_name

if TYPE_CHECKING:
    from stream_doctor.engine.redaction import SecretRedactor
    from stream_doctor.minimizer.oracle import Oracle

#: The kinds of value let stay, one at a time, when the fully masked capture loses a kept finding.
KINDS = ("argument values", "names", "ids", "user text", "model text", "other text")
#: What the free text of a unit of each kind is counted as.
_TEXT_OF = {"request": "user text", "event": "model text"}
#: Keys whose one-word string values are the protocol's words (what adapters and rules dispatch on).
_KEPT_VALUES = frozenset(
    {
        "sd", "type", "event", "role", "object", "status", "finish_reason", "stop_reason", "finishReason",
        "version", "provider", "container", "body_container", "method", "kind", "required", "$ref",
        "media_type", "mimeType", "mime_type", "started", "expect", "tool_choice", "stopReason", "done_reason",
        "reason", "event_type", "model",
    }
)  # fmt: skip
#: Keys whose values are paths made of the arguments' keys (which stay): Vertex AI's streamed ``partialArgs``.
_KEY_PATHS = frozenset({"jsonPath"})
#: Keys under which everything is a tool's input or output: no protocol word there, every string masked.
_DATA = frozenset({"input", "arguments", "args", "partial_json", "snapshot", "partialJson"})
#: Keys whose string is JSON text (whole or a fragment): masked token by token, keys kept.
_JSON_TEXT = frozenset({"arguments", "partial_json", "args", "partialJson"})
#: An envelope header's keys that replay reads; the rest (``source``, ``note`` …) is someone's words.
_HEADER_KEYS = frozenset({"sd", "version", "provider", "container", "body_container", "expect", "started"})
#: Header values that say the framing; any other header's value is masked.
_KEPT_HEADERS = frozenset({"content-type", "content-encoding", "transfer-encoding"})
#: Non-JSON payloads that are the protocol's own.
_KEPT_RAW = frozenset({"[DONE]"})
#: Deeper than this a value is written as ``[redacted]`` whole (Python's stack ends near 1,000).
_DEEPEST = 200


class Whitelist:
    """One rewrite of the units: every kind masked but those ``relaxed`` (in which the ``redactor``
    still masks each secret); ``fragments`` holds, per unit, each argument fragment's masked text."""

    def __init__(
        self, relaxed: frozenset[str], redactor: SecretRedactor | None, fragments: dict[int, dict[str, str]]
    ) -> None:
        self.relaxed, self.redactor, self.fragments = relaxed, redactor, fragments
        # a fragment carried again in another frame (the SDK helper's input_json copy) is masked alike
        self.any_fragment = {old: new for each in fragments.values() for old, new in each.items()}
        self.changed: dict[str, set[str]] = {}  # kind -> the distinct values masked
        self.let: dict[str, set[str]] = {}  # kind -> the distinct values let stay
        self.text_kind = "other text"  # what the unit being rewritten holds free text as
        # a conversation's every request repeats the history: each text is masked once
        self._masks: dict[tuple[Callable[[str], str], str], str] = {}

    def _mask(self, masker: Callable[[str], str], text: str) -> str:
        found = self._masks.get((masker, text))
        if found is None:
            found = self._masks[masker, text] = masker(text)
        return found

    def layout(self, layout: Layout) -> Layout:
        head, tail = _decoded(layout.head), _decoded(layout.tail)
        header = layout.header()
        if header is not None:
            slim = {key: value for key, value in header.items() if key in _HEADER_KEYS}
            if len(slim) < len(header):
                self.changed.setdefault("header notes", set()).update(k for k in header if k not in slim)
            new_head = jsontext.dumps(self.value(slim, None, False, 0, None)).decode() + "\n"
        elif layout.container == "sse":
            new_head = mask_sse_text(head, lambda data: self._data(data, None))
        else:
            new_head = mask_json_text(head)
        return Layout(layout.container, _encoded(new_head), _encoded(mask_json_text(tail)))

    def unit(self, index: int, unit: Unit, container: str) -> Unit:
        fragments = self.fragments.get(index)
        self.text_kind = _TEXT_OF.get(unit.kind, "other text")
        if container == "sse":
            text = mask_sse_text(_decoded(unit.text), lambda data: self._data(data, fragments))
            return Unit(_encoded(text), unit.kind, unit.turn)
        if unit.payload is None:
            return Unit(_encoded(mask_json_text(_decoded(unit.text))), unit.kind, unit.turn)
        return unit.edited(self.value(unit.value(), None, False, 0, fragments))

    def _data(self, data: str, fragments: dict[str, str] | None) -> str:
        """An SSE event's data: its JSON rewritten (on one line), else its text masked token by token."""
        if data.strip() in _KEPT_RAW:
            return data
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            return mask_json_text(data)
        return jsontext.dumps(self.value(value, None, False, 0, fragments)).decode()

    def value(self, value: Any, key: str | None, data: bool, depth: int, fragments: dict[str, str] | None) -> Any:
        if isinstance(value, str):
            return self.string(value, key, data, fragments)
        if key is not None and is_secret_field_name(key) and not isinstance(value, (dict, list, bool)):
            return value if value is None else REDACTED
        if depth > _DEEPEST and isinstance(value, (dict, list)):
            return REDACTED
        if isinstance(value, dict):
            if key == "headers" and not data:
                return {name: self._header(name, item) for name, item in value.items()}
            return {
                name: self.value(item, name, data or _holds_data(name, item), depth + 1, fragments)
                for name, item in value.items()
            }
        if isinstance(value, list):
            return [self.value(item, key, data, depth + 1, fragments) for item in value]
        return value

    def _header(self, name: str, value: Any) -> Any:
        if not isinstance(value, str):
            return self.value(value, name, False, 1, None)
        return value if name.lower() in _KEPT_HEADERS else self._masked("headers", value, self._mask(mask, value))

    def string(self, text: str, key: str | None, data: bool, fragments: dict[str, str] | None) -> str:
        if key is not None and is_secret_field_name(key):
            return self._masked("secrets", text, self._mask(mask, text))
        if not data and ((key in _KEPT_VALUES and is_word(text)) or key in _KEY_PATHS):
            return text
        if fragments is not None and text in fragments:  # whatever the key: Responses' ``delta``, the AI SDK's …
            return self._kind("argument values", text, fragments[text])
        if data and key in _JSON_TEXT and text in self.any_fragment:
            return self._kind("argument values", text, self.any_fragment[text])
        if data:
            masked = self._mask(mask_json_text if key in _JSON_TEXT else mask, text)
            return self._kind("argument values", text, masked)
        if key == "url":
            return self._masked("urls", text, self._mask(mask_url, text))
        if key in ("raw", "raw_body"):
            return (
                text
                if text.strip() in _KEPT_RAW
                else self._kind(self.text_kind, text, self._mask(mask_json_text, text))
            )
        if key is not None and is_id_key(key):
            return self._kind("ids", text, self._mask(mask_id, text))
        if key in NAME_KEYS:
            return text if text in WRAPPER_NAMES else self._kind("names", text, self._mask(mask, text))
        return self._kind(self.text_kind, text, self._mask(_mask_text, text))

    def _kind(self, kind: str, text: str, masked: str) -> str:
        if kind not in self.relaxed or self.redactor is None:
            return self._masked(kind, text, masked)
        kept = self.redactor.text(text)
        if kept == text:
            self.let.setdefault(kind, set()).add(text)
        else:
            self.changed.setdefault("secrets", set()).add(text)
        return kept

    def _masked(self, kind: str, text: str, masked: str) -> str:
        if masked != text:
            self.changed.setdefault(kind, set()).add(text)
        return masked


def _mask_text(text: str) -> str:
    """Free text masked; text that is a JSON object or array (a structured answer given as text, which
    SD304 reads) masked as JSON, its keys kept."""
    if text[:1] in ("{", "[") and text[-1:] in ("}", "]"):
        try:
            orjson.loads(text)
        except orjson.JSONDecodeError:
            return mask(text)
        return mask_json_text(text)
    return mask(text)


def _holds_data(key: str, value: Any) -> bool:
    """Whether ``value`` under ``key`` is a tool's input or output. A Responses request's ``input`` is the
    conversation (a list of items, or the user's text), not a call's: its protocol words stay."""
    return key in _DATA and (key != "input" or isinstance(value, dict))


def _decoded(data: bytes) -> str:
    """Bytes as text, a byte that is not UTF-8 kept as it is (a finding may be about it: SD004); being no
    letter, it is not masked."""
    return data.decode("utf-8", "surrogateescape")


def _encoded(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


class WhitelistRedaction:
    """Rewrites ``units`` by the whitelist, letting a kind of value stay only when the finding needs it."""

    def __init__(self, layout: Layout, units: list[Unit], oracle: Oracle, name: str) -> None:
        self.layout, self.units, self.oracle, self.name = layout, units, oracle, name
        self.replaced: dict[str, int] = {}
        self.kept: dict[str, int] = {}

    def run(self) -> bool:
        """Rewrite the units by the strictest plan that keeps the findings; False when none does (a
        finding depends on a secret)."""
        calls = self._calls()
        plans = [frozenset(), *(frozenset({kind}) for kind in KINDS), frozenset(KINDS)]
        call_id = self.oracle.call_id  # --call: the kept call, by its id as this rewrite writes it
        redactor: SecretRedactor | None = None
        for relaxed in plans:
            if relaxed and redactor is None:
                redactor = self._redactor(calls)
            whitelist = Whitelist(relaxed, redactor, self._fragments(calls, relaxed, redactor))
            layout = whitelist.layout(self.layout)
            units = [whitelist.unit(index, unit, layout.container) for index, unit in enumerate(self.units)]
            self.oracle.call_id = call_id if call_id is None or "ids" in relaxed else mask_id(call_id)
            if self.oracle(layout.join(units)):
                self.layout, self.units = layout, units
                self.replaced = {kind: len(values) for kind, values in whitelist.changed.items() if values}
                self.kept = {kind: len(values) for kind, values in whitelist.let.items() if values}
                return True
        self.oracle.call_id = call_id
        return False

    def _calls(self) -> list[tuple[str, Sequence[str], list[int]]]:
        """Each call's raw arguments, its fragments and the offsets of the frames that carry them."""
        report = replay_quietly(self.name, self.oracle.options, self.layout.join(self.units))
        if report is None:
            return []
        try:
            return [
                (call.raw_arguments, call.fragment_texts, [pos.offset for pos in call.fragment_positions])
                for call in report.calls
            ]
        finally:
            report.close()

    def _redactor(self, calls: list[tuple[str, Sequence[str], list[int]]]) -> SecretRedactor:
        """What a kind let stay still masks: every value the existing redaction finds (a credential-named
        field at any depth of any record, or of a call's arguments) and every credential-shaped value
        (``sk-…``, a bearer token). Built only when a kind is let stay."""
        from stream_doctor.engine.redaction import SecretRedactor, collect, collect_text

        found: dict[str, None] = {}
        collect(self.layout.header(), found)
        for unit in self.units:
            if unit.payload is not None:
                collect(unit.value(), found)
        for raw, _texts, _offsets in calls:
            collect_text(raw, found)
        texts = [self.layout.head, self.layout.tail, *(unit.text for unit in self.units)]
        shaped = [value for text in texts for value in credential_values(text.decode("utf-8", "replace"))]
        return SecretRedactor([*found, *shaped])

    def _fragments(
        self,
        calls: list[tuple[str, Sequence[str], list[int]]],
        relaxed: frozenset[str],
        redactor: SecretRedactor | None,
    ) -> dict[int, dict[str, str]]:
        """Per unit, each argument fragment it carries -> that fragment masked: the call's whole JSON text
        masked, then cut where the fragments were cut (masking keeps lengths)."""
        starts = self._starts()
        found: dict[int, dict[str, str]] = {}
        for raw, texts, offsets in calls:
            if "argument values" in relaxed and redactor is not None:
                masked: Sequence[str] = redactor.fragments(raw, texts)
            else:
                whole, at, pieces = mask_json_text(raw), 0, []
                for text in texts:
                    pieces.append(whole[at : at + len(text)])
                    at += len(text)
                masked = pieces
            for offset, old, new in zip(offsets, texts, masked, strict=True):
                index = starts.get(offset)
                if index is not None:
                    found.setdefault(index, {})[old] = new
        return found

    def _starts(self) -> dict[int, int]:
        """Each unit's offset in the joined capture -> its index."""
        starts, at = {}, len(self.layout.head)
        separator = 1 if self.layout.container == "json" else 0
        for index, unit in enumerate(self.units):
            starts[at] = index
            at += len(unit.text) + separator
        return starts
