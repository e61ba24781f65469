"""Detection imports only the adapters a capture could be: the pre-filter must never leave out one
that would have scored (then the choice, and the "fits several providers" error, would change)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from stream_doctor import providers
from stream_doctor.capture import load
from stream_doctor.capture.base import CaptureError, Frame, Pos
from stream_doctor.conversation.build import split
from stream_doctor.providers import ADAPTERS, SNIFF_FRAMES, WORDS, DetectionError, anthropic, candidates
from stream_doctor.providers.sniffing import Words
from tests.conftest import ROOT, fixture_files

FIXTURES = fixture_files(check_tree=True, notes=True)


def samples(path: Path) -> list[list]:  # type: ignore[type-arg]
    try:
        capture = load(str(path))
    except CaptureError:
        return []
    found = []
    for section in split(capture):
        events = [f for f in section.frames[: SNIFF_FRAMES * 4] if f.kind == "event"][:SNIFF_FRAMES]
        if events:
            found.append(events)
    return found


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT / "fixtures")))
def test_an_adapter_left_out_scores_nothing(path: Path) -> None:
    for sample in samples(path):
        possible = candidates(sample)
        for name in ADAPTERS:
            if name not in possible:
                assert ADAPTERS[name].sniff(sample) == 0, (name, sorted(possible))


def test_fixtures_cover_every_provider() -> None:
    assert len(FIXTURES) > 100
    assert {p.relative_to(ROOT / "fixtures").parts[0] for p in FIXTURES} >= {"anthropic", "openai", "gemini", "bedrock"}


def test_every_event_type_an_adapter_knows_passes_the_filter() -> None:
    # A frame weighs above 0 with these adapters only when its "type" is one of these names (or, for
    # Responses, any "response.…"; for the UI stream any "data-…"): each must pass the filter.
    from stream_doctor.providers import (
        anthropic_protocol,
        anthropic_sdk,
        cohere,
        openai_responses,
        openai_sdk,
        vercel_ai,
    )

    def passes(name: str, kind: str, **value: object) -> bool:
        sample = [Frame(Pos(1, 1, 0), b"", {"type": kind, **value}, None, kind)]
        return name in candidates(sample)

    for kind in anthropic_protocol.KNOWN_TYPES:
        assert passes("anthropic", kind) and passes("anthropic-sdk", kind, content_block={}, snapshot="")
    for kind in anthropic_sdk.HELPER_EVENTS:
        assert passes("anthropic-sdk", kind, snapshot="")
    for kind in openai_responses.KNOWN_TYPES | {"response.anything_new"}:
        assert passes("openai-responses", kind)
    for kind in cohere.KNOWN_TYPES:
        assert passes("cohere", kind)
    for kind in openai_sdk.HELPER_EVENTS | {"chunk"}:
        assert passes("openai-sdk", kind)
    for kind in vercel_ai.KNOWN_TYPES | {"data-weather"}:
        assert passes("vercel-ai", kind)


def test_an_anthropic_capture_imports_no_other_adapter() -> None:
    sample = samples(ROOT / "fixtures" / "anthropic" / "one_call.sse")[0]
    assert candidates(sample) == {"anthropic"}


def undetected(fixtures: list[Path]) -> set[str]:
    """The registered adapters that detection (no hint: ``candidates`` then every sniff) picks for
    none of these fixtures' turns."""
    picked = set()
    for path in fixtures:
        for sample in samples(path):
            try:
                adapter, _ = providers.detect(sample)
            except DetectionError:
                continue
            picked.add(adapter.name)
    return set(providers.ADAPTERS) - picked


def test_every_adapter_is_detected_from_a_fixture() -> None:
    # An adapter that detection never picks scores 0 on every capture without a word: one with no
    # fixture of its own, or one whose words (providers.WORDS) no capture holds (it is never asked to sniff).
    assert not undetected(FIXTURES), "add its fixtures under fixtures/<provider>/ and the words its frames hold"


def test_an_adapter_without_words_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # Adding a provider once, as a scratch step: Anthropic's adapter registered under a new name ...
    scratch = SimpleNamespace(
        name="scratch",
        title="Scratch",
        protocol=anthropic.protocol,
        sniff=anthropic.sniff,
        translator=anthropic.translator,
    )
    registered = {name: ADAPTERS[name] for name in ADAPTERS if name != "anthropic"}
    monkeypatch.setattr(providers, "ADAPTERS", {**registered, "scratch": scratch})
    monkeypatch.setattr(providers, "WORDS", {**{name: WORDS[name] for name in registered}, "scratch": Words()})
    fixtures = [ROOT / "fixtures" / "anthropic" / "one_call.sse"]
    # ... is never detected while its words are none of the capture's,
    assert "scratch" in undetected(fixtures)
    # and is once they are.
    monkeypatch.setitem(providers.WORDS, "scratch", WORDS["anthropic"])
    assert "scratch" not in undetected(fixtures)


@pytest.mark.slow  # every fixture replayed forced to each provider (7 s of CPU)
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT / "fixtures")))
def test_a_forced_provider_reads_the_capture_or_is_refused_naming_the_detected_one(path: Path) -> None:
    """Every fixture forced to every provider (issue 36): its own provider is never refused, and a
    wrong one either reads something (a call, a block, a stop reason, an error) or is a RunError
    saying what detection finds; never a report of nothing that passes."""
    from stream_doctor import RunError, replay

    try:
        own = replay(path).stream.capture.provider
    except RunError:
        return  # not a capture on its own (a tools file, a sidecar)
    for name in ADAPTERS:
        try:
            report = replay(path, provider=name)
        except RunError as error:
            assert name != own and f"it looks like {own} (detected)" in str(error), (name, str(error))
            continue
        read = any(m.blocks or m.stop_reason or m.error for turn in report.turns for m in turn.stream.messages)
        assert name == own or report.calls or read, name


def _data_lines(path: str) -> list[str]:
    return [line[len("data: ") :] for line in (ROOT / path).read_text().splitlines() if line.startswith("data: {")]


#: One-call captures of three providers, as the JSON of their events: what the generated captures mix.
EVENTS = {
    "anthropic": _data_lines("fixtures/anthropic/one_call.sse"),
    "openai": _data_lines("fixtures/openai/one_call.sse"),
    "gemini": _data_lines("fixtures/gemini/one_call.sse"),
}


def _reads(lines: list[str], provider: str) -> bool:
    """Whether ``provider``'s adapter reads anything of these events: a call, a block, a stop, an error."""
    from stream_doctor import RunError, replay

    try:
        report = replay(("\n".join(lines) + "\n").encode(), provider=provider, container="jsonl")
    except RunError:
        return False
    return bool(report.calls) or any(m.blocks or m.stop_reason or m.error for m in report.stream.messages)


def test_a_forced_provider_is_not_refused_for_events_of_another_mixed_in() -> None:
    """The neighbours of issue 36's case, generated: one provider's events mixed with another's, in
    any order, forced to the first: when it reads its own events alone, it is never refused for the
    others (they are findings); a refusal always says what detection finds, or that it finds nothing."""
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    from stream_doctor import RunError, replay

    names = sorted(EVENTS)

    @hypothesis.settings(max_examples=60, deadline=None, derandomize=True)
    @hypothesis.given(st.sampled_from(names), st.sampled_from(names), st.data())
    def check(forced: str, other: str, data: Any) -> None:
        own = data.draw(st.lists(st.sampled_from(EVENTS[forced]), min_size=1, max_size=4), label="own")
        foreign = data.draw(st.lists(st.sampled_from(EVENTS[other]), min_size=1, max_size=8), label="foreign")
        lines = data.draw(st.permutations(own + foreign), label="order")
        try:
            replay(("\n".join(lines) + "\n").encode(), provider=forced, container="jsonl")
        except RunError as error:
            assert not _reads(own, forced), str(error)
            assert "it looks like" in str(error) or "no provider is detected" in str(error), str(error)

    check()


def test_words_admit_a_frame_by_each_kind_of_word_and_not_its_near_miss() -> None:
    def frame(value: object, event: str | None = None) -> Frame:
        return Frame(Pos(1, 1, 0), b"", value, None, event)

    words = Words(names=frozenset({"text"}), prefixes=("data-",), beside=frozenset({"snapshot"}))
    assert words.admits(frame({"type": "text", "snapshot": ""})) and words.admits(
        frame({"type": "data-x", "snapshot": 1})
    )
    assert not words.admits(frame({"type": "text"})) and not words.admits(frame({"type": "data-x"}))  # nothing beside
    assert not words.admits(frame({"type": "texts", "snapshot": ""})) and not words.admits(frame({"type": ["text"]}))
    wrapped = Words(events=frozenset({"messageStop"}))
    assert wrapped.admits(frame({}, "messageStop")) and wrapped.admits(frame({"messageStop": {}}))
    assert not wrapped.admits(frame({"messageStop": {}, "p": "x"}))  # two keys: not a wrapper
    assert not wrapped.admits(frame({"messageStop": {}}, "other"))  # the frame's own event name is the one read
    assert wrapped.admits(frame("not an object", "messageStop")) and not wrapped.admits(frame("messageStop"))
    inner = Words(keys=frozenset({"candidates"}), within="response")
    assert inner.admits(frame({"candidates": []})) and inner.admits(frame({"response": {"candidates": []}}))
    assert not inner.admits(frame({"response": {"output": []}})) and not inner.admits(
        frame({"request": {"candidates": []}})
    )
    other_field = Words(field="object", prefixes=("thread",))
    assert other_field.admits(frame({"object": "thread.run"})) and not other_field.admits(frame({"type": "thread.run"}))
    assert not Words().heard([frame({"type": "text"})])


def test_a_capture_no_adapter_reads_is_refused_listing_the_adapters_in_the_registrys_order() -> None:
    # as --provider's help and its "choose from" list them (not sorted); a frame of one adapter's is the near miss
    stranger = [Frame(Pos(1, 1, 0), b"", {"type": "nothing-any-provider-sends"}, event="message")]
    with pytest.raises(DetectionError) as refused:
        providers.detect(stranger)
    assert f"(tried {', '.join(ADAPTERS)}); force one with --provider" in str(refused.value)
    known = [
        Frame(
            Pos(1, 1, 0), b"", {"type": "message_start", "message": {"id": "m", "content": []}}, event="message_start"
        )
    ]
    assert providers.detect(known)[0] is ADAPTERS["anthropic"]


def test_detection_asks_one_frame_per_shape_and_hears_what_every_frame_says() -> None:
    """``candidates`` asks the adapters about one frame of each shape (``sniffing.distinct``): generated
    frames built of every adapter's words, of near misses and of values no word reads must give the
    same adapters as asking about every frame, and a frame differing only in what a word reads (a
    type, a key, an event name, the object ``within``) is a shape of its own."""
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    from stream_doctor.providers.sniffing import distinct

    words = [WORDS[name] for name in ADAPTERS]
    names = sorted({n for w in words for n in w.names} | {p + "x" for w in words for p in w.prefixes} | {"texts"})
    keys = sorted({k for w in words for k in (*w.keys, *w.beside, *w.events)} | {"type", "object", "p"})
    text = st.sampled_from(names)
    leaf = st.one_of(text, st.integers(0, 2), st.none(), st.lists(text, max_size=1))
    objects = st.dictionaries(st.sampled_from(keys + ["event_type", "response"]), leaf, max_size=3)
    value = st.one_of(objects, st.builds(lambda inner: {"response": inner}, objects), st.just("[DONE]"), leaf)
    event = st.one_of(st.none(), st.sampled_from(sorted({e for w in words for e in w.events} | {"message"})))
    frame = st.builds(
        lambda v, e, k: Frame(Pos(1, 1, 0), b"", v, None, e, kind=k),
        value,
        event,
        st.sampled_from(["event", "comment"]),
    )

    @hypothesis.settings(max_examples=300, deadline=None, derandomize=True)
    @hypothesis.given(st.lists(frame, max_size=12))
    def check(sample: list[Frame]) -> None:
        assert candidates(sample) == {name for name in ADAPTERS if WORDS[name].heard(sample)}

    check()

    def at(value: object, event: str | None = None) -> Frame:
        return Frame(Pos(1, 1, 0), b"", value, None, event)

    same = [at({"type": "response.output_text.delta", "delta": str(n)}) for n in range(50)]
    assert distinct(same, words) == same[:1]  # what no word reads (the delta) makes no new shape
    apart = [
        at({"type": "ping"}),
        at({"type": "pong"}),
        at({"type": "ping", "choices": []}),
        at({"type": "ping"}, "messageStop"),
        at({"response": {"candidates": []}}),
        at({"response": {"output": []}}),
        at({"object": "thread.run"}),
        at({"type": ["ping"]}),
        at({"type": ["ping"]}),  # unhashable: each its own shape, never an error
    ]
    assert distinct(apart, words) == apart
