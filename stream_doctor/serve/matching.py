"""Whether the application's request may be answered with the capture's turn, and what differs.

A difference that changes what the turn answers (another model, another tool set, another user
message, results for calls the capture never made) refuses the request: answering it with the
recorded stream would be a silent wrong answer. A difference the answer does not depend on (the
system prompt, a sampling parameter, a header) is noted and served. What the application sends back
about the calls it was served (their inputs, their results) is never a reason to refuse: it is what
gets judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stream_doctor.util.jsontext import equal
from stream_doctor.util.wording import preview

if TYPE_CHECKING:
    from stream_doctor.serve.load import Script

#: Request fields the answer depends on through the checks below, or that are the conversation itself.
#: (``stream`` is not one: a request that asks for no stream is refused below, any other value than the
#: recorded one, ``1`` for ``true`` too, is noted and the turn served as recorded.)
_JUDGED = frozenset({"model", "tools", "messages", "contents", "input", "toolConfig"})
#: Where a request without ``stream`` is answered streamed all the same (Ollama's ``/api/chat`` streams
#: unless told ``"stream": false``); every other API with the field answers one JSON body without it.
_STREAMS_BY_DEFAULT = frozenset({"ollama"})


@dataclass(frozen=True)
class Difference:
    """What differs between a request and the recorded one: ``refused`` ones change the answer."""

    refused: tuple[str, ...] = ()
    noted: tuple[str, ...] = ()


def compare(provider: str, recorded: dict[str, Any] | None, body: Any) -> Difference:
    """The request ``body`` against the capture's ``recorded`` request (method, url, headers, body)."""
    from stream_doctor.conversation.requests import parse

    expected = recorded.get("body") if recorded is not None else None
    if not isinstance(expected, dict) or not expected:
        return Difference(noted=("the capture holds no request for this turn: the request is not checked",))
    if not isinstance(body, dict):
        return Difference(refused=("the request body is not a JSON object",))
    want, got = parse(provider, expected), parse(provider, body)
    refused: list[str] = []
    if _no_stream(provider, body) and not _no_stream(provider, expected):
        streaming = f"stream {_shown(body['stream'])}" if "stream" in body else "no stream"
        refused.append(f"{streaming}: it asks for an answer not streamed, where the capture's turn is a stream")
    if not equal(expected.get("model"), body.get("model")) and "model" in expected:
        refused.append(f"model {_shown(body.get('model'))}, the capture's {_shown(expected.get('model'))}")
    if set(want.tools) != set(got.tools):
        refused.append(f"tools {sorted(got.tools)}, the capture's {sorted(want.tools)}")
    asked, recorded_asks = _user_texts(got), _user_texts(want)
    if asked != recorded_asks:
        refused.append(f"user messages {_shown(asked)}, the capture's {_shown(recorded_asks)}")
    made = {c.call_id for c in want.calls if c.call_id} | {r.call_id for r in want.results if r.call_id}
    unknown = sorted({r.call_id for r in got.results if r.call_id and r.call_id not in made})
    if unknown:
        refused.append(f"results for calls the capture never made: {', '.join(unknown)}")
    noted = [
        f"{key} differs ({_shown(body.get(key))}, the capture's {_shown(expected.get(key))})"
        for key in sorted((set(expected) | set(body)) - _JUDGED)
        if not equal(expected.get(key), body.get(key))  # metadata of any depth: == recurses as deep
    ]
    return Difference(tuple(refused), tuple(noted))


def _no_stream(provider: str, body: dict[str, Any]) -> bool:
    """Whether the request asks for one JSON body rather than a stream: ``stream`` false, or left out
    where the API then answers unstreamed (an API that streams by its path, Gemini's and Bedrock's, has
    no such field, and the recorded request then has none either)."""
    return body.get("stream", provider in _STREAMS_BY_DEFAULT) in (False, None)


class Choice:
    """Which script answers the application's new conversations: one whose first turn's request this
    request is (no refusing difference), the first of them not yet taken, then each in turn (round-robin:
    the one that answered fewest, the first of those); when none fits, the first script, whose first turn
    then refuses the request with the difference. Two agents that ask a capture's two conversations the
    same first question each get one; a third gets the first again."""

    def __init__(self) -> None:
        self.taken: dict[int, int] = {}  # id of a script -> conversations it answered

    def chosen(self, scripts: list[Script], body: Any) -> Script:
        fitting = [s for s in scripts if not compare(s.provider, s.turns[0].request, body).refused]
        if not fitting:
            return scripts[0]
        script = min(fitting, key=lambda s: self.taken.get(id(s), 0))  # min keeps the first of equals
        self.taken[id(script)] = self.taken.get(id(script), 0) + 1
        return script


def _user_texts(facts: Any) -> list[str]:
    """The text of each user message: what the user asked, never the tool results sent back."""
    return [m.text for m in facts.messages if m.role == "user" and m.text is not None]


def _shown(value: Any) -> str:
    return preview(value, 60)
