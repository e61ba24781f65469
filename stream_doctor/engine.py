"""The pipeline on one screen: capture → frames → events → accumulated stream → findings → report."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator

from stream_doctor.accumulate.accumulator import Accumulator
from stream_doctor.accumulate.stream import AccumulatedStream, CaptureInfo
from stream_doctor.capture import load
from stream_doctor.capture.base import Capture, CaptureError, Frame
from stream_doctor.envelope_events import envelope_event
from stream_doctor.events import Event
from stream_doctor.findings import Finding, Severity
from stream_doctor.gcpause import no_gc
from stream_doctor.options import Options
from stream_doctor.providers import ADAPTERS, DetectionError, detect
from stream_doctor.providers.base import Adapter, Translator
from stream_doctor.rules import RULES
from stream_doctor.rules.base import Rule


class RunError(Exception):
    """The capture could not be replayed at all; the CLI prints it on one line and exits 2."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        where = path if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {message}")
        self.path, self.message, self.line = path, message, line  # `check` turns these into an SD000 finding


@dataclass(frozen=True)
class Report:
    stream: AccumulatedStream
    findings: tuple[Finding, ...]
    options: Options
    events: tuple[tuple[Frame, Event], ...] = field(default=())  # only with keep_events

    @property
    def counts(self) -> dict[Severity, int]:
        counts = {s: 0 for s in Severity}
        for finding in self.findings:
            counts[finding.severity] += 1
        return counts

    @property
    def failed(self) -> bool:
        return any(f.severity >= self.options.fail_on for f in self.findings)


def replay(path: str, options: Options) -> Report:
    # Everything built here is kept until the report is done: cyclic collections would only
    # re-scan it, at about a third of the replay's time (see gcpause).
    with no_gc():
        try:
            capture = load(path, options.container)
        except CaptureError as error:
            raise RunError(path if path != "-" else "<stdin>", error.message, error.line) from None
        adapter = _adapter(capture, options)
        stream, events = _accumulate(capture, adapter, options)
        return Report(stream, diagnose(stream, options), options, events)


def _accumulate(
    capture: Capture, adapter: Adapter, options: Options
) -> tuple[AccumulatedStream, tuple[tuple[Frame, Event], ...]]:
    accumulator = Accumulator(adapter.positional_indices)
    translator = adapter.translator()
    kept: list[tuple[Frame, Event]] = []
    if options.keep_events:
        accumulator.feed_all(_events(capture.frames, translator, kept))
    elif hasattr(translator, "translate"):  # the hot path: one generator, no list per frame
        accumulator.feed_all(translator.translate(capture.frames, release=True))
        accumulator.feed_all(translator.close())
    else:
        feed = accumulator.feed
        translate = translator.feed
        for frame in capture.frames:
            for event in translate(frame) if frame.kind == "event" else (envelope_event(frame),):
                feed(event)
        accumulator.feed_all(translator.close())
    info = CaptureInfo(
        path=capture.path,
        container=capture.container,
        compressed=capture.compressed,
        provider=adapter.name,
        provider_forced=options.provider is not None,
        size=capture.size,
        frames=len(capture.frames),
        duration=_duration(capture.frames),
        header=capture.header,
    )
    stream = accumulator.result(info, capture.ended_cleanly, capture.problems, translator.counts)
    return stream, tuple(kept)


def diagnose(stream: AccumulatedStream, options: Options) -> tuple[Finding, ...]:
    findings = [finding for rule in _rules(options.select, options.ignore) for finding in rule.check(stream, rule)]
    return tuple(sorted(findings, key=lambda f: f.sort_key))


def _events(frames: list[Frame], translator: Translator, kept: list[tuple[Frame, Event]]) -> Iterator[Event]:
    """Every event, remembering which frame it came from (for --timeline)."""
    for frame in frames:
        produced = translator.feed(frame) if frame.kind == "event" else [envelope_event(frame)]
        kept.extend((frame, event) for event in produced)
        yield from produced
    yield from translator.close()


def _adapter(capture: Capture, options: Options) -> Adapter:
    if options.provider is not None:
        adapter = ADAPTERS.get(options.provider)
        if adapter is None:
            raise RunError(
                capture.path, f"unknown provider {options.provider!r} (choose from {', '.join(sorted(ADAPTERS))})"
            )
        return adapter
    if not any(f.kind == "event" for f in capture.frames):
        raise RunError(capture.path, "the capture holds no events")
    hint = capture.header.get("provider") if capture.header else None
    try:
        adapter, _ = detect(capture.frames, hint if isinstance(hint, str) else None)
    except DetectionError as error:
        raise RunError(capture.path, str(error)) from None
    return adapter


def _duration(frames: list[Frame]) -> float | None:
    times = [f.t for f in frames if f.t is not None]
    return max(times) - min(times) if len(times) > 1 else None


@lru_cache(maxsize=64)
def _rules(select: tuple[str, ...], ignore: tuple[str, ...]) -> tuple[Rule, ...]:
    """The rules --select and --ignore leave (by code or code prefix); `check` asks once per capture."""
    return tuple(
        rule
        for rule in RULES
        if (not select or any(rule.code.startswith(p.upper()) for p in select))
        and not any(rule.code.startswith(p.upper()) for p in ignore)
    )
