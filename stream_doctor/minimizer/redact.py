"""``--redact``: a minimized capture made fit to share, each replacement kept only if the findings stay.

Replaced, kind by kind: the secrets ``redaction.Redactor`` knows (credential-named fields, the
values they hold wherever they recur, credential-shaped values such as ``sk-…`` or a bearer token),
ids (one id, one new id everywhere, so pairing holds), the text of user, system and developer
messages, the model's text, and the string values of tool arguments (masked letter for letter:
``"Lisbon"`` becomes ``"xxxxxx"``, so the argument fragments keep their lengths and still join into
the same JSON). Each kind is tried at once, then value by value: a value without which a kept
finding no longer fires (or a new one appears) is kept, and counted as kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

from stream_doctor.credentials import credential_values
from stream_doctor.minimizer.oracle import replay_quietly
from stream_doctor.minimizer.units import Layout, Unit

if TYPE_CHECKING:
    from stream_doctor.minimizer.oracle import Oracle
    from stream_doctor.redaction import Redactor
    from stream_doctor.report import Report

#: Message roles whose text is the user's (or the application's prompt), in every provider's words.
_USER_ROLES = frozenset({"user", "system", "developer"})
#: Request fields that hold a prompt outside the messages (Anthropic ``system``, Responses ``instructions``).
_PROMPT_FIELDS = frozenset({"system", "instructions", "systemInstruction", "system_instruction", "preamble"})
#: Keys whose string values are structure, never text: left alone inside user messages.
_NOT_TEXT = frozenset(
    {"type", "role", "tool_use_id", "tool_call_id", "call_id", "id", "name", "media_type", "mimeType"}
)
#: What an envelope header keeps under --redact: what the replay reads, nothing written by hand.
_HEADER_KEYS = frozenset({"sd", "version", "provider", "container", "expect", "started"})
#: Event keys that carry the model's text.
_MODEL_TEXT = frozenset({"text", "thinking", "content", "refusal"})

Edit = Callable[[Any], Any]
#: Deeper than this a value is left to the Redactor, which masks it whole (Python's stack ends near 1,000).
_DEEPEST = 200


class Redaction:
    """Applies the kinds of replacement to ``units`` through ``accepts`` (the minimizer's state)."""

    def __init__(self, layout: Layout, units: list[Unit], oracle: Oracle, name: str) -> None:
        self.layout, self.units, self.oracle, self.name = layout, units, oracle, name
        self.replaced: dict[str, int] = {}
        self.kept: dict[str, int] = {}

    def run(self) -> None:
        self._header()
        self._request_credentials()
        self._secrets()
        self._kind("ids", self._ids())
        self._kind("user text", self._user_texts())
        self._kind("model text", self._model_texts())
        self._arguments()

    # -- trying ----------------------------------------------------------------------------------

    def _try(self, units: list[Unit]) -> bool:
        if units == self.units or not self.oracle(self.layout.join(units)):
            return False
        self.units = units
        return True

    def _kind(self, kind: str, mapping: dict[str, str]) -> None:
        """Replace each string value of ``mapping`` (whole string values, in every editable unit) by its
        new value: all at once, else one by one."""
        mapping = {old: new for old, new in mapping.items() if old != new}
        if not mapping:
            return
        if self._try(self._mapped(mapping)):
            self._count(kind, len(mapping), 0)
            return
        done = sum(1 for old, new in mapping.items() if self._try(self._mapped({old: new})))
        self._count(kind, done, len(mapping) - done)

    def _count(self, kind: str, done: int, kept: int) -> None:
        if done:
            self.replaced[kind] = self.replaced.get(kind, 0) + done
        if kept:
            self.kept[kind] = self.kept.get(kind, 0) + kept

    def _mapped(self, mapping: dict[str, str]) -> list[Unit]:
        def edit(value: Any) -> Any:
            return _leaves(value, lambda text, _key: mapping.get(text, text))

        return [_edited(unit, edit) for unit in self.units]

    def _report(self) -> Report | None:
        return replay_quietly(self.name, self.oracle.options, self.layout.join(self.units))

    # -- the kinds -------------------------------------------------------------------------------

    def _header(self) -> None:
        """An envelope header's free text (``source``, ``note``) can name anything: only what replays stays."""

        from stream_doctor import jsontext

        header = self.layout.header()
        if header is None:
            return
        slim = {key: value for key, value in header.items() if key in _HEADER_KEYS}
        if slim == header:
            return
        layout = Layout(self.layout.container, jsontext.dumps(slim) + b"\n", self.layout.tail)
        if self.oracle(layout.join(self.units)):
            self.layout = layout
            self._count("header notes", len(header) - len(slim), 0)
        else:
            self._count("header notes", 0, len(header) - len(slim))

    def _request_credentials(self) -> None:
        """What reading a request already masks for the diagnosis (credential headers, user-info and keys
        in its URL, credential fields of its body: ``capture/exchange.py``), masked in the file too."""
        from stream_doctor.capture.exchange import redact_body, redact_headers, redact_url

        changed = 0

        def edit(record: Any) -> Any:
            nonlocal changed
            if not isinstance(record, dict):
                return record
            masked = dict(record)
            if isinstance(masked.get("url"), str):
                masked["url"] = redact_url(masked["url"])
            if isinstance(masked.get("headers"), dict):
                masked["headers"] = redact_headers(masked["headers"].items())
            if "body" in masked:
                masked["body"] = redact_body(masked["body"])
            changed += sum(1 for key in ("url", "headers", "body") if masked.get(key) != record.get(key))
            return masked

        units = [_edited(unit, edit) if unit.kind == "request" else unit for unit in self.units]
        if self._try(units):
            self._count("request credentials", changed, 0)
        elif units != self.units:
            self._count("request credentials", 0, changed)

    def _secrets(self) -> None:
        """Every secret the Redactor finds (credential-named fields at any depth, their values wherever
        they recur, in fragments too) and every credential-shaped value in any string, each numbered
        (``[redacted:N]``) so two secrets still differ: all at once, else one value at a time."""
        from stream_doctor.redaction import Redactor

        report = self._report()
        if report is None:
            return
        try:
            known = list(Redactor.of_report(report).labels)
        finally:
            report.close()
        shaped = [
            found for value in self._values() for text, _key in _strings(value) for found in credential_values(text)
        ]
        shaped += [
            found
            for unit in self.units
            if unit.payload is None
            for found in credential_values(unit.text.decode("utf-8", "replace"))
        ]
        secrets = list(dict.fromkeys([*known, *shaped]))
        if not secrets:  # still: credential-named fields, and what is nested too deep to look into, masked whole
            candidate = self._redacted(Redactor(()))
            if candidate != self.units:
                self._count("secrets", *((1, 0) if self._try(candidate) else (0, 1)))
            return
        if self._try(self._redacted(Redactor(secrets))):
            self._count("secrets", len(secrets), 0)
            return
        done = sum(1 for secret in secrets if self._try(self._redacted(Redactor([secret]))))
        self._count("secrets", done, len(secrets) - done)  # a finding depends on the rest: they stay, and are said

    def _redacted(self, redactor: Redactor) -> list[Unit]:
        report = self._report()
        if report is None:
            return self.units
        try:
            fragments = self._fragment_edits(report, redactor.fragments)
        finally:
            report.close()
        units = []
        for index, unit in enumerate(self.units):
            changed = _edited(unit, _then(fragments.get(index, _same), redactor.value))
            if changed.payload is None:
                changed = Unit(redactor.data(unit.text), unit.kind, unit.turn)
            units.append(changed)
        return units

    def _ids(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for value in self._values():
            for text, key in _strings(value):
                if key is not None and key.lower().endswith("id") and text and text not in found:
                    found[text] = f"{_prefix(text)}r{len(found) + 1}"
        return found

    def _user_texts(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for unit, value in zip(self.units, self._values(), strict=True):
            if unit.kind != "request":
                continue
            body = value.get("body", value) if isinstance(value, dict) else value
            for text in _prompt_texts(body):
                found.setdefault(text, f"[user text {len(found) + 1}]")
        return found

    def _model_texts(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for unit, value in zip(self.units, self._values(), strict=True):
            if unit.kind != "event":
                continue
            for text, key in _strings(value):
                if key in _MODEL_TEXT and text.strip() and not text.lstrip().startswith(("{", "[")):
                    found.setdefault(text, f"[model text {len(found) + 1}]")
        return found

    def _arguments(self) -> None:
        """Each string value of each call's arguments masked letter for letter, in the fragments that
        stream it (same length, so they still join into the same JSON) and wherever it recurs whole."""
        report = self._report()
        if report is None:
            return
        try:
            values: dict[str, None] = {}
            for call in report.calls:
                for text, _key in _strings(call.arguments):
                    if len(text) >= 2 and _mask(text) != text:
                        values.setdefault(text, None)
        finally:
            report.close()
        if not values:
            return
        if self._try(self._masked(list(values))):
            self._count("argument values", len(values), 0)
            return
        done = sum(1 for text in values if self._try(self._masked([text])))
        self._count("argument values", done, len(values) - done)

    def _masked(self, texts: list[str]) -> list[Unit]:
        forms = [(_escaped(text), _mask_escaped(_escaped(text))) for text in texts]
        plain = {text: _mask(text) for text in texts}
        report = self._report()
        if report is None:
            return self.units

        def masked_raw(raw: str, pieces: Any) -> Any:
            masked = raw
            for form, mask in forms:
                masked = masked.replace(form, mask)
            if masked == raw:
                return pieces
            out, at = [], 0
            for piece in pieces:
                out.append(masked[at : at + len(piece)])
                at += len(piece)
            return tuple(out)

        try:
            fragments = self._fragment_edits(report, masked_raw)
        finally:
            report.close()

        def edit(value: Any) -> Any:
            def leaf(text: str, _key: str | None) -> str:
                if text in plain:
                    return plain[text]
                for form, mask in forms:
                    text = text.replace(form, mask)  # inside JSON carried in a string (history arguments)
                return text

            return _leaves(value, leaf)

        return [_edited(unit, _then(fragments.get(index, _same), edit)) for index, unit in enumerate(self.units)]

    # -- helpers ---------------------------------------------------------------------------------

    def _values(self) -> list[Any]:
        return [unit.value() if unit.payload is not None else None for unit in self.units]

    def _fragment_edits(self, report: Report, rewrite: Callable[[str, Any], Any]) -> dict[int, Edit]:
        """For each unit, the edit that puts the rewritten fragments of every call in place."""
        from stream_doctor.redaction import _replace_string

        starts = self._starts()
        changes: dict[int, list[tuple[str, str]]] = {}
        for call in report.calls:
            texts = call.fragment_texts
            new = rewrite(call.raw_arguments, texts)
            if new is texts:
                continue
            for pos, old, masked in zip(call.fragment_positions, texts, new, strict=True):
                index = starts.get(pos.offset)
                if index is not None and old != masked:
                    changes.setdefault(index, []).append((old, masked))

        def edit_of(pairs: list[tuple[str, str]]) -> Edit:
            def edit(value: Any) -> Any:
                for old, masked in pairs:
                    value = _replace_string(value, old, masked)
                return value

            return edit

        return {index: edit_of(pairs) for index, pairs in changes.items()}

    def _starts(self) -> dict[int, int]:
        """Each unit's offset in the joined capture -> its index."""
        starts, at = {}, len(self.layout.head)
        separator = 1 if self.layout.container == "json" else 0
        for index, unit in enumerate(self.units):
            starts[at] = index
            at += len(unit.text) + separator
        return starts


def _same(value: Any) -> Any:
    return value


def _then(first: Edit, second: Edit) -> Edit:
    def both(value: Any) -> Any:
        return second(first(value))

    return both


def _edited(unit: Unit, edit: Edit) -> Unit:
    if unit.payload is None:
        return unit
    from stream_doctor import jsontext

    new = edit(unit.value())  # an edit may change the value it is given in place
    # compared as text: comparing values recurses, and a hostile capture nests as deep as JSON allows
    return unit if jsontext.dumps(new) == jsontext.dumps(unit.value()) else unit.edited(new)


def _leaves(value: Any, change: Callable[[str, str | None], str], key: str | None = None, depth: int = 0) -> Any:
    """``value`` rebuilt with each string leaf (not keys) passed through ``change(text, its key)``; what
    is nested deeper than ``_DEEPEST`` is left as it is (the Redactor masks such a value whole)."""
    if depth > _DEEPEST:
        return value
    if isinstance(value, dict):
        return {k: _leaves(item, change, k, depth + 1) for k, item in value.items()}
    if isinstance(value, list):
        return [_leaves(item, change, key, depth + 1) for item in value]
    if isinstance(value, str):
        return change(value, key)
    return value


def _strings(value: Any, key: str | None = None, depth: int = 0) -> Iterator[tuple[str, str | None]]:
    if depth > _DEEPEST:
        return
    if isinstance(value, dict):
        for k, item in value.items():
            yield from _strings(item, k, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, key, depth + 1)
    elif isinstance(value, str):
        yield value, key


def _prompt_texts(body: Any) -> Iterator[str]:
    """The user's, system's and developer's text in a request body, in every provider's shape."""
    if not isinstance(body, dict):
        return
    for field in _PROMPT_FIELDS:
        if field in body:
            yield from (text for text, key in _strings(body[field]) if key not in _NOT_TEXT and text)
    for messages in (body.get("messages"), body.get("contents"), body.get("input")):
        if isinstance(messages, str) and messages:
            yield messages  # Responses: input as one string
        if not isinstance(messages, list):
            continue
        for message in messages:
            if isinstance(message, dict) and message.get("role") in _USER_ROLES:
                yield from (text for text, key in _strings(message) if key not in _NOT_TEXT and text)


def _prefix(text: str) -> str:
    """An id's prefix (``toolu_``, ``call_``, ``fc_``), kept so the new id reads like the provider's."""
    for index, char in enumerate(text[:13]):
        if char in "_-":
            return text[: index + 1]
    return "id_"


def _escaped(text: str) -> str:
    from stream_doctor import jsontext

    return jsontext.dumps(text).decode()[1:-1]


def _mask(text: str) -> str:
    return "".join("x" if char.isalnum() else char for char in text)


def _mask_escaped(form: str) -> str:
    """A JSON string's inner text with each letter and digit made ``x``, its escapes kept whole."""
    out, at = [], 0
    while at < len(form):
        char = form[at]
        if char == "\\":
            width = 6 if form[at + 1 : at + 2] == "u" else 2
            out.append(form[at : at + width])
            at += width
            continue
        out.append("x" if char.isalnum() else char)
        at += 1
    return "".join(out)
