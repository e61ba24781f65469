"""The named variants ``serve --vary`` plays a recorded response under: one registry, each a seeded function
from a ``Recorded`` response to the ``Plan`` the server writes.

Three kinds. A **meaning-keeping** variant changes only how the bytes reach the application (where the reads
are cut, line ends, keep-alives, pacing): any correct client hands the tool exactly what it would have from the
recording. A **fault** changes what the stream says (it is cut, the provider refuses, an error arrives), so an
application that runs a call anyway ran one the stream never completed. A **quirk** is a behaviour some
providers really send that some widely used libraries mishandle (``quirks.py``: each names the libraries and
where the provider sends it). A variant that does not apply to a response (CRLF on an AWS event stream, a ping
on a provider that documents none) says why (``Variant.skipped``) and is not played.

``variant_names`` and ``plan_for`` are what the server and the matrix use; each variant's ``description`` is
its one sentence, for the matrix table and ``--help``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Callable, Literal, Mapping

from stream_doctor.serve import faults, quirks
from stream_doctor.serve.framing import Framing, ends_event, ends_line, framing, inserted, pieces_plan, plan_of
from stream_doctor.serve.wire import Plan, Recorded, as_recorded

Kind = Literal["meaning", "fault", "quirk"]
KINDS: tuple[Kind, ...] = ("meaning", "fault", "quirk")
Make = Callable[[Recorded, random.Random], Plan]
ALL_FRAMINGS: tuple[Framing, ...] = ("sse", "eventstream", "lines")


class NotApplicable(ValueError):
    """The variant does not apply to this response; the message says why (a line of the matrix)."""


@dataclass(frozen=True)
class Variant:
    """One named variant: what it is (``kind``, ``description``) and how it plays a response (``make``)."""

    name: str
    kind: Kind
    description: str  # one sentence: the matrix table's row and --help
    make: Make
    framings: tuple[Framing, ...] = ALL_FRAMINGS
    providers: tuple[str, ...] = ()  # the providers it applies to; () every provider
    why_not: str = ""  # what the variant needs, said when a provider is not in ``providers``
    needs_times: bool = False  # it plays the recorded pacing: a capture with no times is skipped
    libraries: tuple[str, ...] = ()  # a quirk: the client profiles (``clients.PROFILES``) that mishandle it
    source: str = ""  # a quirk: where the provider sends it
    check: Callable[[Recorded], str | None] | None = None  # why it does not apply to a body, beyond the above

    def skipped(self, recorded: Recorded) -> str | None:
        """Why this variant does not apply to ``recorded``; None when it does."""
        kind = framing(recorded)
        if kind not in self.framings:
            return f"{self.name} applies to {_framing_names(self.framings)}, not to {_FRAMING_NAMES[kind]}"
        if self.providers and recorded.provider not in self.providers:
            return f"{self.name} does not apply to {recorded.provider}: {self.why_not}"
        if self.needs_times and all(at is None for at, _ in recorded.events):
            return f"{self.name} needs the times of the events, and the capture recorded none"
        reason = self.check(recorded) if self.check is not None else None
        return f"{self.name} does not apply: {reason}" if reason is not None else None

    def plan(self, recorded: Recorded, seed: int) -> Plan:
        """The plan for ``recorded`` under this variant and ``seed`` (the same seed, the same plan)."""
        reason = self.skipped(recorded)
        if reason is not None:
            raise NotApplicable(reason)
        return self.make(recorded, random.Random(f"{self.name}:{seed}"))


_FRAMING_NAMES: dict[Framing, str] = {
    "sse": "server-sent events",
    "eventstream": "an AWS event stream",
    "lines": "JSON lines",
}


def _framing_names(framings: tuple[Framing, ...]) -> str:
    return " and ".join(_FRAMING_NAMES[f] for f in framings)


# -- meaning-keeping ----------------------------------------------------------------------------


#: the largest body ``byte-per-read`` plays: its plan holds a read (about 64 bytes of memory) per byte
BYTE_PER_READ_LIMIT = 256 * 1024


def _small_enough(recorded: Recorded) -> str | None:
    if len(recorded.body) <= BYTE_PER_READ_LIMIT:
        return None
    return f"the body is {len(recorded.body):,} bytes and a read per byte is played up to {BYTE_PER_READ_LIMIT:,}"


def _byte_per_read(recorded: Recorded, rng: random.Random) -> Plan:
    body = recorded.body
    return pieces_plan(recorded, [body[at : at + 1] for at in range(len(body))])


#: a ``\\uXXXX`` escape in JSON text: a cut inside one leaves a reader half an escape
_ESCAPE = re.compile(rb"\\u[0-9a-fA-F]{4}")
#: random cuts besides the forced ones: about one per 64 bytes, at most this many
_MAX_CUTS = 64


def _random_cuts(recorded: Recorded, rng: random.Random) -> Plan:
    """Reads cut at seeded offsets, with one cut inside a multi-byte UTF-8 character and one inside a
    ``\\u`` escape whenever the body holds one (the two places a decoder that decodes each read alone breaks)."""
    body = recorded.body
    if len(body) < 2:
        return pieces_plan(recorded, [body])
    inside_characters = [at for at in range(1, len(body)) if 0x80 <= body[at] <= 0xBF]
    inside_escapes = [m.start() + rng.randint(1, 5) for m in _ESCAPE.finditer(body)]
    cuts = {rng.randrange(1, len(body)) for _ in range(min(_MAX_CUTS, 1 + len(body) // 64))}
    for places in (inside_characters, inside_escapes):
        if places:
            cuts.add(rng.choice(places))
    bounds = [0, *sorted(cuts), len(body)]
    return pieces_plan(recorded, [body[a:b] for a, b in zip(bounds, bounds[1:], strict=False)])


def _coalesced(recorded: Recorded, rng: random.Random) -> Plan:
    """Runs of two to five events in one read, the run lengths seeded."""
    events = [data for _, data in recorded.events]
    pieces = []
    while events:
        size = rng.randint(2, 5)
        pieces.append(b"".join(events[:size]))
        events = events[size:]
    return pieces_plan(recorded, pieces)


def _one_read(recorded: Recorded, rng: random.Random) -> Plan:
    return pieces_plan(recorded, [recorded.body])


#: a line end of the event-stream grammar: CRLF, CR or LF (https://html.spec.whatwg.org/#event-stream)
_LINE_END = re.compile(rb"\r\n|\r|\n")


def _crlf(recorded: Recorded, rng: random.Random) -> Plan:
    return pieces_plan(recorded, [_LINE_END.sub(b"\r\n", data) for _, data in recorded.events])


#: the comment an SSE server writes to keep an idle connection open (OpenRouter writes
#: ``: OPENROUTER PROCESSING``, https://openrouter.ai/docs/api-reference/streaming)
KEEP_ALIVE = b": keep-alive\n"
#: Anthropic's keep-alive event, "any number of" which a stream may hold
#: (https://docs.anthropic.com/en/docs/build-with-claude/streaming#ping-events)
PING = b'event: ping\ndata: {"type": "ping"}\n\n'


def _keep_alive(recorded: Recorded, rng: random.Random) -> Plan:
    # a comment line belongs to no event's fields: it may be written wherever a line may begin
    return inserted(recorded, rng, KEEP_ALIVE, ends_line)


def _ping(recorded: Recorded, rng: random.Random) -> Plan:
    # after message_start: the SDKs accumulate nothing before it; between whole events
    return inserted(recorded, rng, PING, ends_event, first=1)


def _recorded_pacing(recorded: Recorded, rng: random.Random) -> Plan:
    """One read per event, each after the pause the capture recorded before it (none where it has no time)."""
    reads, before = [], 0.0
    for at, data in recorded.events:
        pause = max(0.0, at - before) if at is not None else 0.0
        before = at if at is not None else before
        reads.append((pause, data))
    return plan_of(recorded, reads)


_ANTHROPIC = ("anthropic",)
#: the providers whose streams are Chat Completions chunks, which the Chat quirks rewrite
_CHAT = ("openai", "mistral")
_CHAT_ONLY = "it rewrites Chat Completions chunks"


def _error_event(name: str, description: str, make: Make) -> Variant:
    """A fault that writes an error event into the stream: SSE, of the providers that document one."""
    why_not = "the provider documents no error event in its stream"
    return Variant(name, "fault", description, make, ("sse",), faults.ERROR_EVENTS, why_not)


def _chat_quirk(
    name: str, description: str, make: Make, libraries: tuple[str, ...], source: str, needs_calls: bool = True
) -> Variant:
    """A quirk of Chat Completions streams: served as SSE, by the providers that stream Chat chunks."""
    check = quirks.no_calls if needs_calls else None
    return Variant(name, "quirk", description, make, ("sse",), _CHAT, _CHAT_ONLY, False, libraries, source, check)


def _by_name(*variants: Variant) -> dict[str, Variant]:
    """The registry of ``variants``, in their order; a name declared twice is refused as the module loads."""
    registry = {variant.name: variant for variant in variants}
    if len(registry) != len(variants):
        raise ValueError(f"variants declared twice: {sorted({v.name for v in variants if variants.count(v) > 1})}")
    return registry


#: every variant by name, in the order the matrix lists them (a name -> value registry, as the adapters,
#: readers and rules are): the one definition of each name, kind and sentence. Not a ``LazyRegistry``: the
#: variants are values of this one module, whose sentences ``serve --help`` prints.
VARIANTS: Mapping[str, Variant] = _by_name(
    Variant(
        "event-per-read", "meaning", "Each event in a read of its own, with no pauses.", lambda r, _: as_recorded(r)
    ),
    Variant(
        "byte-per-read", "meaning", "Every byte of the body in a read of its own.", _byte_per_read, check=_small_enough
    ),
    Variant(
        "random-cuts",
        "meaning",
        "Reads cut at seeded offsets, one inside a multi-byte UTF-8 character and one inside a \\u escape "
        "when the body holds them.",
        _random_cuts,
    ),
    Variant("coalesced", "meaning", "Runs of two to five events written in one read.", _coalesced),
    Variant("one-read", "meaning", "The whole body in a single read, as a buffering proxy delivers it.", _one_read),
    Variant("crlf", "meaning", "Every line of the event stream ends with CRLF.", _crlf, framings=("sse",)),
    Variant(
        "keep-alive",
        "meaning",
        "Keep-alive comment lines (`: keep-alive`) in reads of their own between events.",
        _keep_alive,
        framings=("sse",),
    ),
    Variant(
        "ping",
        "meaning",
        "Anthropic's documented `ping` events between events after `message_start`.",
        _ping,
        framings=("sse",),
        providers=_ANTHROPIC,
        why_not="only Anthropic documents a ping event",
    ),
    Variant(
        "recorded-pacing",
        "meaning",
        "Each event in a read of its own after the pause the capture recorded before it.",
        _recorded_pacing,
        needs_times=True,
    ),
    # -- faults: what the stream says is changed
    Variant(
        "cut-after-event",
        "fault",
        "The body stops after a seeded event inside the first tool call and the connection closes.",
        faults.cut_after_event,
    ),
    Variant(
        "cut-before-completion",
        "fault",
        "Every event up to the first tool call's completion event, which never comes: the connection closes.",
        faults.cut_before_completion,
    ),
    Variant(
        "disconnect-after-ms",
        "fault",
        "The connection drops at a seeded moment inside the first tool call, events paced as recorded or 10 ms apart.",
        faults.disconnect_after,
    ),
    Variant(
        "status-429",
        "fault",
        "A 429 rate-limit error in the provider's own shape instead of the stream.",
        faults.rate_limited,
        providers=faults.RATE_LIMITED,
        why_not="its error shape is not known",
    ),
    Variant(
        "status-529",
        "fault",
        "Anthropic's 529 overloaded error instead of the stream.",
        faults.overloaded,
        providers=("anthropic",),
        why_not="529 is Anthropic's own status",
    ),
    _error_event(
        "error-event-first",
        "An overloaded `error` event in the provider's own shape, and nothing else, after a 200.",
        faults.error_first,
    ),
    _error_event(
        "overloaded-mid-stream",
        "An overloaded `error` event in the provider's own shape inside the first tool call, ending the stream.",
        faults.error_mid_stream,
    ),
    # -- quirks: what some providers really send and some libraries mishandle (their profiles say how)
    _chat_quirk(
        "index-from-one",
        "Tool calls numbered from index 1, as gateways that copy Anthropic's block index send them.",
        quirks.index_from_one,
        ("openai-python", "openai-node"),
        "../shared/reference/wire-formats.md §2.5: Anthropic → OpenAI fallback gateways (captured: vercel/ai "
        "packages/openai-compatible/src/chat/__fixtures__/anthropic-fallback-tool-call.sse; vercel/ai #18382)",
    ),
    _chat_quirk(
        "repeated-id-and-name",
        "Every fragment of a call repeats its id, type and name, as Fireworks and the LiteLLM proxy send them.",
        quirks.repeated_id_and_name,
        ("openai-python", "langchain", "pydantic-ai"),
        "../shared/reference/wire-formats.md §2.5: Fireworks, LiteLLM proxy (SillyTavern PR #5948, "
        "BerriAI/litellm#8990, langchain4j PR #4544)",
    ),
    _chat_quirk(
        "whole-calls-without-index",
        "Each call sent whole in one entry without `index` or `type`, as Mistral's API sends it.",
        quirks.whole_calls_without_index,
        ("openai-python", "openai-node"),
        "../shared/reference/wire-formats.md §7.1 (captured: vercel/ai packages/mistral/src/__fixtures__/"
        "mistral-tool-call.chunks.txt) and §2.5 (Gemini's OpenAI-compatible endpoint leaves out the index)",
    ),
    _chat_quirk(
        "data-ping",
        "Data-only keep-alives (`data: :ping`) between events, as relays in front of Chat servers send them.",
        quirks.data_ping,
        ("openai-python", "openai-node", "langchain", "litellm", "pydantic-ai", "vercel-ai"),
        "../shared/reference/wire-formats.md §0: relays' data-only keep-alives (deepseek-ai/deepseek-harness "
        "discussion #6593)",
        needs_calls=False,
    ),
)


def variant_names(kind: Kind | None = None) -> tuple[str, ...]:
    """The variants' names, in the matrix's order; ``kind``: only those of that kind."""
    return tuple(name for name, v in VARIANTS.items() if kind is None or v.kind == kind)


def plan_for(name: str, seed: int = 0) -> Callable[[Recorded], Plan]:
    """What the server plays a response with under the variant ``name`` and ``seed``: a function that
    raises ``NotApplicable`` (with the reason) for a response the variant does not apply to."""
    try:
        variant = VARIANTS[name]
    except KeyError:
        raise ValueError(f"no variant named {name!r}: {', '.join(VARIANTS)}") from None
    return lambda recorded: variant.plan(recorded, seed)
