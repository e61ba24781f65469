"""What a client profile is: a named state machine fed the neutral events, and what it hands the tool.

A profile models one accumulator (a real library at a pinned version, or a naive pattern seen in
bug reports). It is fed the same neutral events as the reference accumulator, each with the
reference's call number, and records every call it would hand to the tool, when (the event at
which it considers the call complete), or the exception it would raise. ``compare`` then sets
that against the reference calls; the SD8xx rules report the differences.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Hashable, Literal

from stream_doctor.capture.base import Pos
from stream_doctor.clients.framing import Sentinel
from stream_doctor.values.events import MISSING, Event

Kind = Literal["library", "pattern"]


@dataclass(frozen=True, slots=True)
class Handoff:
    """One call as the client hands it to the tool.

    ``calls`` are the reference calls (0-based ordinals) whose fragments it holds, the one it stands
    for first: a client that merges two calls holds both. ``input`` is the value the tool receives;
    ``MISSING`` when the client does not run it (``invalid``: it flags the arguments as broken, the
    way LangChain's ``invalid_tool_calls`` or the AI SDK's ``invalid`` calls do).
    """

    calls: tuple[int, ...]
    call_id: str | None
    name: str | None
    arguments: str | None  # the argument text the client holds, when it holds text
    input: Any
    at: Pos | None  # the event at which the client considers the call complete; None: the end of the stream
    when: str  # that event in the library's own terms ("content_block_stop", "next tool call index")
    invalid: bool = False


@dataclass(frozen=True, slots=True)
class ClientError:
    """The exception the client raises on this stream, where, in its own words."""

    pos: Pos | None
    exception: str
    message: str
    call: int | None = None  # the reference call being handled when it raised
    provider_error: bool = False  # the client's reaction to an error the provider sent: what it should do


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a client's verdict on one turn comes from: the installed library, run (``clients/runs.py``),
    or the profile's model of it, and why the model stands when the library could not be run."""

    mode: Literal["run", "model"]
    library: str | None  # the package, as its registry names it
    version: str | None  # run: the version installed; model: the version the profile follows
    note: str | None = None  # why the model stands, or what the run was fed
    #: a run the model was also asked about (``--client-mode both``, or another version installed):
    #: per reference call, where the model's verdict differs from the run's; None: not compared
    model_differs: tuple[tuple[int, str], ...] | None = None


@dataclass(frozen=True)
class Profile:
    name: str  # kebab-case, stable: what --client takes
    title: str
    kind: Kind
    providers: tuple[str, ...]  # the adapters whose captures it reads; () for every provider
    summary: str  # one line
    machine: Callable[[], Machine]
    library: str | None = None  # the package, as its registry names it
    version: str | None = None  # the pinned version whose source the profile follows
    sources: tuple[str, ...] = ()  # file:lines it follows
    runs_in_python: bool = False  # `stream_doctor.clients.library` can replay captures through it
    doc: str = ""

    def applies_to(self, provider: str) -> bool:
        return not self.providers or provider in self.providers

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}" if self.version else self.name


def profile(
    name: str,
    title: str,
    kind: Kind,
    summary: str,
    providers: tuple[str, ...] = (),
    library: str | None = None,
    version: str | None = None,
    sources: tuple[str, ...] = (),
    runs_in_python: bool = False,
) -> Callable[[Callable[[], Machine]], Profile]:
    """Declare a profile from its machine class; the module docstring is its documentation."""

    def wrap(machine: Callable[[], Machine]) -> Profile:
        module = inspect.getmodule(machine)
        doc = (module.__doc__ if module else None) or ""
        return Profile(name, title, kind, providers, summary, machine, library, version, sources, runs_in_python, doc)

    return wrap


@dataclass
class Machine:
    """The state every profile machine keeps: what it handed, and the exception that stopped it."""

    handoffs: list[Handoff] = field(default_factory=list)
    error: ClientError | None = None
    provider: str = ""  # the adapter that read the capture (set by ``clients.run``)
    #: the providers whose SSE events the library dispatches by their ``event:`` name, ignoring a frame without one
    reads_event_names: ClassVar[tuple[str, ...]] = ()
    #: the library's SSE decoder dispatches an event whose closing blank line never came, once the body
    #: has ended (openai-node's ``_iterSSEMessages`` flushes it); most never dispatch it
    reads_unterminated_last_event: ClassVar[bool] = False
    #: a call handed at the event where the client then raises still reached the tool (openai-node emits
    #: each done event as it goes); otherwise the event's handoffs are lost with it (openai-python builds
    #: a chunk's events before yielding any)
    hands_before_raising: ClassVar[bool] = False
    #: how the library's stream reader tests an event's data for ``[DONE]`` (``framing.Sentinel``); None:
    #: it reads no sentinel, or dispatches by event name, and the adapter's reading of a frame stands
    done_sentinel: ClassVar[Sentinel | None] = None
    #: the library's stream reader stops at its sentinel and reads nothing after it (openai-python
    #: ``Stream.__stream__``: ``break``; openai-node ``Stream.fromSSEResponse``: ``break``; LangChain, LiteLLM
    #: and pydantic-ai read through the OpenAI SDK's); False: it skips the sentinel and reads on (the AI SDK)
    sentinel_ends_reading: ClassVar[bool] = True

    def feed(self, event: Event, call: int | None) -> None:  # pragma: no cover - every profile overrides it
        raise NotImplementedError

    def close(self, end: Pos | None) -> None:
        """The stream ended (``end``: its last event)."""

    def hand(
        self,
        calls: tuple[int, ...],
        call_id: str | None,
        name: str | None,
        arguments: str | None,
        value: Any,
        at: Pos | None,
        when: str,
        invalid: bool = False,
    ) -> None:
        self.handoffs.append(Handoff(calls, call_id, name, arguments, value, at, when, invalid))

    def fail(
        self, pos: Pos | None, exception: str, message: str, call: int | None = None, provider_error: bool = False
    ) -> None:
        """The client raises here; the earliest exception is the one that stops it."""
        held = self.error
        if held is None or (pos is not None and held.pos is not None and pos.number < held.pos.number):
            self.error = ClientError(pos, exception, message, call, provider_error)


def choice_of(key: Hashable) -> int:
    """The choice a Chat Completions call belongs to (the adapter keys calls ``(choice, index, …)``)."""
    if isinstance(key, tuple) and key and isinstance(key[0], int):
        return key[0]
    return 0


def parse_json(text: str) -> Any:
    """``json.loads`` as an application would call it: the value, or MISSING when it does not parse."""
    import orjson

    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return MISSING


def modelled(profile: Profile, note: str | None = None) -> Provenance | None:
    """A library profile's verdict as its model's (None for a naive pattern: it models no library)."""
    return Provenance("model", profile.library, profile.version, note) if profile.kind == "library" else None
