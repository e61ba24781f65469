"""litellm: LiteLLM's ``stream_chunk_builder`` (how ``litellm.completion(stream=True)`` chunks are
rebuilt into one response, which agents built on LiteLLM then run).

Modelled from source, not run by the test suite (its wheel alone is 41 MB, before its
dependencies, so the test extra does not install it): ``litellm`` 1.109.1,
``litellm/litellm_core_utils/streaming_chunk_builder_utils.py`` L589-735,
``ChunkProcessor.get_combined_tool_content``: fragments grouped by ``index`` (a missing index is
0), argument text concatenated per index, the last non-empty ``id`` and ``name`` win, an empty
buffer becomes ``"{}"``; the response is built after the stream, whatever its finish reason.

- Two calls sent on one index become one call with ``{…}{…}`` (litellm #7621), run with text that
  does not parse; a call without an id gets none.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stream_doctor.capture.base import Pos
from stream_doctor.clients._wire import Fragment, WireMachine
from stream_doctor.clients.base import parse_json, profile


@dataclass
class _Slot:
    calls: list[int]
    call_id: str | None = None
    name: str | None = None
    texts: list[str] = field(default_factory=list)


@dataclass
class ChunkBuilder(WireMachine):
    slots: dict[tuple[int, int], _Slot] = field(default_factory=dict)

    def fragment(self, fragment: Fragment) -> None:
        if fragment.server_side or self.provider == "anthropic":
            return
        choice = fragment.key[0] if isinstance(fragment.key, tuple) and fragment.key else 0
        slot = self.slots.setdefault((choice, fragment.index or 0), _Slot([]))
        if fragment.call is not None and fragment.call not in slot.calls:
            slot.calls.append(fragment.call)
        if fragment.call_id:
            slot.call_id = fragment.call_id
        if fragment.name:
            slot.name = fragment.name
        if fragment.arguments:
            slot.texts.append(fragment.arguments)

    def stream_error(self, pos: Pos) -> None:
        self.fail(pos, "APIError", "the stream sent an error object", provider_error=True)

    def end(self, end: Pos | None) -> None:
        for _, slot in sorted(self.slots.items()):
            text = "".join(slot.texts) or "{}"
            self.hand(
                tuple(slot.calls),
                slot.call_id,
                slot.name,
                text,
                parse_json(text),
                None,
                "end of stream (stream_chunk_builder)",
            )


PROFILE = profile(
    "litellm",
    "LiteLLM stream_chunk_builder",
    "library",
    "tool calls grouped by index (missing index: 0); last id and name win; built after the stream",
    providers=("openai",),
    library="litellm",
    version="1.109.1",
    sources=("litellm/litellm_core_utils/streaming_chunk_builder_utils.py:589-735 (get_combined_tool_content)",),
)(ChunkBuilder)
