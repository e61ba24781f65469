"""The differential totals: on how many inputs each real library and each reference parser was compared
with stream-doctor, and how many agreed. Run from the repository root::

    .venv/bin/python -m tests.differential_tally [--examples N] [--only python|node|parsers]

It runs the differential tests' own comparisons (their ``compare`` functions, input lists and hypothesis
strategies) and counts, where the tests assert: per library, the fixtures, the corpus captures (when
``../shared/corpus`` is there), the SSE bodies inside fixture and corpus containers (cassettes, HAR,
recordings), the saved examples and the generated streams compared and agreeing, the generated
disagreements the test's ``UNFIXED`` excuses and the pairs its ``KNOWN_DIVERGENCES`` and
``CONTAINER_DIVERGENCES`` list; per
parser, the inputs compared and agreeing and those that differ as the test's list of differences says.
It prints Markdown tables on stdout (progress on stderr) and exits 1 when a comparison disagreed in a way
nothing lists, which is what the tests would fail on.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tests.clients.differential import Side

ROOT = Path(__file__).resolve().parent.parent
GROUPS = ("python", "node", "parsers")
#: the unexplained examples shown per row
SHOWN = 3


@dataclass
class Count:
    """What one subject (a library, a parser) did on one source of inputs."""

    compared: int = 0
    agreeing: int = 0
    excused: int = 0  # a generated disagreement the test's UNFIXED lists for a shape the stream holds
    listed: int = 0  # a known divergence, or a difference the test lists with the words that explain it
    unexplained: list[str] = field(default_factory=list)
    reasons: dict[str, int] = field(default_factory=dict)  # listed, by reason
    notes: list[str] = field(default_factory=list)

    def add(self, verdict: str, example: str = "", reason: str = "") -> None:
        self.compared += 1
        if verdict == "agree":
            self.agreeing += 1
        elif verdict == "excused":
            self.excused += 1
        elif verdict == "listed":
            self.listed += 1
            if reason:
                self.reasons[reason] = self.reasons.get(reason, 0) + 1
        else:
            self.unexplained.append(example)


@dataclass
class Table:
    """Counts by (group, subject, source), in the order first met."""

    rows: dict[tuple[str, str, str], Count] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def __call__(self, group: str, subject: str, source: str) -> Count:
        return self.rows.setdefault((group, subject, source), Count())


def _progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@contextmanager
def _unless_skipped(table: Table, what: str) -> Iterator[None]:
    """The tests' fixtures skip (or, under CI=true, fail) when a library, Node or Chromium is missing."""
    try:
        yield
    except (pytest.skip.Exception, pytest.fail.Exception) as missing:
        table.skipped.append(f"{what}: {missing.msg}")
        _progress(f"skipped {what}: {missing.msg}")


def _generate(examples: int, body: Callable[[Any], None]) -> None:
    """``body`` called on ``examples`` hypothesis draws, with the differential tests' settings; the same
    examples as CI's when ``examples`` is 100 or fewer (derandomized), new ones each run above."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from tests.clients.streams import GENERATED

    @settings(GENERATED, max_examples=examples, derandomize=examples <= 100, database=None)
    @given(st.data())
    def run(data: Any) -> None:
        body(data)

    run()


def _verdict(client: str, found: list[str], listed: bool = False, excused: bool = False) -> str:
    """A library's verdict from a differential ``compare``'s sentences (each starts with the client)."""
    if not any(line.split(" ", 1)[0] == client for line in found):
        return "agree"
    return "listed" if listed else "excused" if excused else "unexplained"


def _example(name: str, found: list[str], client: str) -> str:
    return f"{name}: " + " | ".join(line for line in found if line.split(" ", 1)[0] == client)[:400]


# -- the libraries ---------------------------------------------------------------------------------------


def _tally_libraries(table: Table, group: str, module: Any, libraries: Side, examples: int) -> None:
    """The comparisons of one differential test module (its inputs and lists) through its side of the harness."""
    from stream_doctor.api import replay
    from tests.clients.streams import (
        CORPUS,
        anthropic_streams,
        byte_cuts,
        capture_name,
        chat_streams,
        container_cases,
        fed_bodies,
        seeded_cuts,
    )

    def provider_of(data: bytes, name: str) -> str:
        return str(replay(data, name=name).stream.capture.provider)

    captures = module._captures()
    _progress(f"{group}: {len(captures)} fixtures and corpus captures")
    for path in captures:
        data = path.read_bytes()
        clients = libraries.clients(provider_of(data, str(path)))
        if not clients:
            continue
        name = capture_name(path)
        found = libraries.compare(data, str(path), clients, seeded_cuts(path, data))
        source = "corpus" if CORPUS in path.parents else "fixtures"
        for client in clients:
            known = (client, name) in module.KNOWN_DIVERGENCES
            count = table(group, client, source)
            count.add(_verdict(client, found, listed=known), _example(name, found, client), "known divergence")
            if known and _verdict(client, found) == "agree":
                count.notes.append(f"{name}: agrees, but KNOWN_DIVERGENCES lists it (fixed?)")

    cases = [case for case in container_cases() if case.interaction is not None]
    _progress(f"{group}: {len(cases)} SSE bodies in fixture and corpus containers")
    for case in cases:
        fed = fed_bodies(case.path)[case.interaction]
        clients = libraries.clients(fed.provider)
        if not clients:
            continue
        found = libraries.compare_fed(fed, clients, seeded_cuts(case.path, fed.data))
        for client in clients:
            known = (client, case.name) in module.CONTAINER_DIVERGENCES
            count = table(group, client, "containers")
            count.add(_verdict(client, found, listed=known), _example(case.name, found, client), "known divergence")
            if known and _verdict(client, found) == "agree":
                count.notes.append(f"{case.name}: agrees, but CONTAINER_DIVERGENCES lists it (fixed?)")

    _progress(f"{group}: {len(module.SAVED)} saved examples")
    for name, data in sorted(module.SAVED.items()):
        chosen = module.SAVED_FOR.get(name) if hasattr(module, "SAVED_FOR") else None
        clients = chosen or libraries.clients(provider_of(data, f"{name}.sse"))
        found = libraries.compare(data, f"{name}.sse", clients)
        for client in clients:
            table(group, client, "saved").add(_verdict(client, found), _example(name, found, client))

    strategies = {
        "anthropic": anthropic_streams(),
        "chat": chat_streams(),
        "mistral-shaped": chat_streams(mistral=True),
    }
    for label, strategy in strategies.items():
        _progress(f"{group}: {examples} generated {label} streams")

        def body(data: Any, strategy: Any = strategy) -> None:
            shapes, stream = data.draw(strategy)
            cuts = byte_cuts(data.draw, stream)
            clients = libraries.clients(provider_of(stream, "generated.sse"))
            found = libraries.compare(stream, "generated.sse", clients, cuts)
            excused = {client for shape, client in module.UNFIXED if shape in shapes}
            shown = stream.decode("utf-8", "replace")[:300]
            for client in clients:
                verdict = _verdict(client, found, excused=client in excused)
                table(group, client, "generated").add(verdict, _example(shown, found, client))

        _generate(examples, body)


def _python(table: Table, examples: int) -> None:
    from tests.clients import test_library_differential as module

    with _unless_skipped(table, "the Python libraries"):
        _tally_libraries(table, "python", module, module.PYTHON, examples)


def _node(table: Table, examples: int) -> None:
    from tests.clients import test_node_differential as module
    from tests.clients.node_harness import NodeHarness, node_executable

    with _unless_skipped(table, "the TypeScript libraries"):
        harness = NodeHarness(node_executable())
        try:
            _tally_libraries(table, "node", module, module.side(harness), examples)
        finally:
            harness.close()


# -- the parsers -----------------------------------------------------------------------------------------


def _httpx_sse(table: Table, examples: int) -> None:
    from hypothesis import strategies as st

    from stream_doctor.capture._text import BOM
    from tests.capture import test_cut_anywhere as module
    from tests.clients.streams import sse_captures

    subject = "SSE reader vs httpx-sse"
    files = [(path, "fixtures") for path, container in module.FIXTURE_FILES if container == "sse"]
    files += [(path, "corpus") for path in sse_captures(())]
    _progress(f"parsers: {subject}, {len(files)} files whole, {examples} cut anywhere")

    def check(path: Path, source: str, data: bytes) -> None:
        ours, theirs = module.against_httpx_sse(data)
        listed = module.httpx_sse_difference(module._whole(path, "sse"))
        verdict = "agree" if ours == theirs else "listed" if listed else "unexplained"
        table("parsers", subject, source).add(verdict, f"{path} ({len(data)} bytes)", listed or "")

    for path, source in files:
        check(path, source, path.read_bytes().removeprefix(BOM))

    def body(data: Any) -> None:
        path, _ = data.draw(st.sampled_from(files))
        whole = path.read_bytes().removeprefix(BOM)
        check(path, "cut anywhere", whole[: 1 + int(data.draw(st.floats(0, 1, exclude_max=True)) * (len(whole) - 1))])

    _generate(examples, body)


#: the problems of a read stream that stand for EXPECTED_DIFFERENCES of the EventSource test
_EVENTSOURCE_PROBLEMS = {
    "unterminated-event": "unterminated-last-event",
    "data-lines-not-separated": "data-lines-not-separated",
    "unprefixed-json": "unprefixed-json",
}


def _eventsource(table: Table, examples: int) -> None:
    from hypothesis import strategies as st

    from stream_doctor.capture.sse import read_sse
    from tests.capture import test_sse_eventsource as module
    from tests.conftest import corpus_files, fixture_files

    subject = "SSE reader vs Chromium EventSource"

    def listed(sent: bytes) -> str | None:
        """The listed difference (EXPECTED_DIFFERENCES, BROWSER_DEVIATIONS) the comparison undid, if any."""
        data = module._as_blink_reads(sent)
        if data != sent:
            return "line-end-after-bom"
        capture = read_sse(data, "eventsource")
        plain = [(f.event or "message", f.data.decode("utf-8", "replace"), f.sse_id or "") for f in capture.frames]
        if module._ours(capture, data) == plain:
            return None
        kinds = [_EVENTSOURCE_PROBLEMS[p.kind] for p in capture.problems if p.kind in _EVENTSOURCE_PROBLEMS]
        return kinds[0] if kinds else "last-event-id-carried"

    def check(browser: Any, streams: list[bytes], source: str) -> None:
        differing = {data for data, _, _ in module.differences(browser, streams)}
        for sent in streams:
            reason = listed(sent)
            if module._as_blink_reads(sent) in differing:
                table("parsers", subject, source).add("unexplained", repr(sent[:300]))
            else:
                table("parsers", subject, source).add("listed" if reason else "agree", reason=reason or "")

    with _unless_skipped(table, subject), module.open_browser() as browser:
        for source, paths in (
            ("fixtures", fixture_files(check_tree=True, sidecars=True)),
            ("corpus", corpus_files()),
        ):
            files = module._sse_files(paths)
            _progress(f"parsers: {subject}, {len(files)} {source} files")
            if files:
                check(browser, [path.read_bytes() for path in files], source)
        _progress(f"parsers: {subject}, {examples} generated batches")

        def body(data: Any) -> None:
            check(browser, data.draw(st.lists(module._stream(), min_size=1, max_size=8)), "generated")

        _generate(examples, body)


def _eventstream(table: Table, examples: int) -> None:
    from hypothesis import strategies as st

    from tests.capture import test_eventstream_botocore as module

    subject = "event-stream decoder vs botocore"

    def add(source: str, difference: str | None, example: str) -> None:
        if difference is None:
            table("parsers", subject, source).add("agree")
        elif difference.startswith("documented: "):
            table("parsers", subject, source).add("listed", reason=difference.removeprefix("documented: "))
        else:
            table("parsers", subject, source).add("unexplained", f"{example}: {difference[:300]}")

    fixtures = module.fixture_streams()
    _progress(f"parsers: {subject}, {len(fixtures)} fixtures")
    for path in fixtures:
        data = path.read_bytes()
        # as the test: whole, then fed in pieces
        fed = [None, [1], [12], list(range(0, len(data), 7)), [len(data) // 2]]
        differences = [d for p in fed if (d := module.compare(data, p)) is not None]
        add("fixtures", differences[0] if differences else None, path.name)
    bodies = module.corpus_bodies()
    _progress(f"parsers: {subject}, {len(bodies)} corpus bodies")
    for name, body in bodies:
        add("corpus", module.compare(body, list(range(0, len(body), 13))), name)
    pieces = st.lists(st.integers(0, 1 << 20), max_size=5)
    _progress(f"parsers: {subject}, {examples} generated and {examples} mutated streams")

    def generated(data: Any) -> None:
        stream = b"".join(data.draw(st.lists(module.message(), min_size=1, max_size=4)))
        add("generated", module.compare(stream, data.draw(pieces)), repr(stream[:100]))

    def mutated(data: Any) -> None:
        stream = data.draw(module.mutated())
        add("mutated", module.compare(stream, data.draw(pieces)), repr(stream[:100]))

    _generate(examples, generated)
    _generate(examples, mutated)


def _globs(table: Table, examples: int) -> None:
    from hypothesis import strategies as st

    from stream_doctor.config.globs import CONFIG, GITIGNORE
    from tests.config import test_globs as module

    subject = "globs vs pathspec"
    _progress(f"parsers: {subject}, {examples} generated patterns and {examples} generated .gitignore files")

    def patterns(data: Any) -> None:
        pattern, path = data.draw(module.patterns), data.draw(module.paths)
        dialect = data.draw(st.sampled_from([CONFIG, GITIGNORE]))
        agree = module.ours(pattern, path, dialect) is module.reference(pattern, path)
        table("parsers", subject, "generated patterns").add("agree" if agree else "unexplained", f"{pattern} {path}")

    def lines(data: Any) -> None:
        written, path = data.draw(st.lists(module.lines, min_size=1, max_size=3)), data.draw(module.paths)
        agree = module.gitignore_lines_agree(written, path)
        verdict = "listed" if agree is None else "agree" if agree else "unexplained"
        table("parsers", subject, "generated .gitignore").add(verdict, f"{written} {path}", "left out (docstring)")

    _generate(examples, patterns)
    _generate(examples, lines)


def _text_width(table: Table) -> None:
    from rich.cells import cell_len

    from stream_doctor.reporters._page import cells
    from tests import test_text_page as module

    subject = "text width vs rich.cells"
    _progress(f"parsers: {subject}, every code point, {len(module.SEQUENCES + module.FLAGS)} sequences")
    for code in range(0x3000):
        char = chr(code)
        for text in (char, f"a{char}b", char * 3):
            verdict = "agree" if cells(text) == cell_len(text) else "unexplained"
            table("parsers", subject, "code points < U+3000 (x3)").add(verdict, hex(code))
    # the test stops at U+3000 to stay quick; each code point above, alone (surrogates are no text)
    for code in range(0x3000, sys.maxunicode + 1):
        if not 0xD800 <= code < 0xE000:
            verdict = "agree" if cells(chr(code)) == cell_len(chr(code)) else "unexplained"
            table("parsers", subject, "code points >= U+3000 (alone)").add(verdict, hex(code))
    for text in module.SEQUENCES + module.FLAGS:
        for shown in (text, f"id {text} x"):
            verdict = "agree" if cells(shown) == cell_len(shown) else "unexplained"
            table("parsers", subject, "emoji sequences and flags").add(verdict, repr(shown))


def _parsers(table: Table, examples: int) -> None:
    _httpx_sse(table, examples)
    _eventsource(table, examples)
    _eventstream(table, examples)
    _globs(table, examples)
    _text_width(table)


# -- the tables ------------------------------------------------------------------------------------------


def _of(count: Count | None, part: int | None = None) -> str:
    if count is None or count.compared == 0:
        return "-"
    return f"{count.agreeing if part is None else part}/{count.compared}"


def render(table: Table, examples: int) -> str:
    out = []
    for group, runtime in (("python", "Python"), ("node", "TypeScript (Node harness)")):
        subjects = sorted({subject for g, subject, _ in table.rows if g == group})
        if not subjects:
            continue
        out += [
            f"### {runtime} libraries vs their profiles ({examples} generated streams per strategy)",
            "",
            "| library | fixtures agree | corpus agree | container bodies agree | saved agree | generated agree "
            "| generated excused (UNFIXED) | known divergences | unexplained |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for subject in subjects:
            rows = {
                source: table.rows.get((group, subject, source))
                for source in ("fixtures", "corpus", "containers", "saved")
            }
            generated = table.rows.get((group, subject, "generated"))
            known = sum(c.listed for c in rows.values() if c)
            unexplained = sum(len(c.unexplained) for k, c in table.rows.items() if k[:2] == (group, subject))
            out.append(
                f"| {subject} | {_of(rows['fixtures'])} | {_of(rows['corpus'])} | {_of(rows['containers'])} "
                f"| {_of(rows['saved'])} "
                f"| {_of(generated)} | {_of(generated, generated.excused if generated else 0)} | {known} "
                f"| {unexplained} |"
            )
        pairs = [c for k, c in table.rows.items() if k[0] == group]
        out += [
            "",
            f"Pairs compared: {sum(c.compared for c in pairs)}, agreeing: {sum(c.agreeing for c in pairs)}, "
            f"excused: {sum(c.excused for c in pairs)}, known divergences: {sum(c.listed for c in pairs)}, "
            f"unexplained: {sum(len(c.unexplained) for c in pairs)}.",
            "",
        ]
    parsers = [(k[1], k[2], c) for k, c in table.rows.items() if k[0] == "parsers"]
    if parsers:
        out += [
            f"### Hand-written parsers vs the library they stand in for ({examples} generated inputs each)",
            "",
            "| parser | inputs | compared | agreeing | listed differences | unexplained |",
            "|---|---|---|---|---|---|",
        ]
        for subject, source, count in parsers:
            reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(count.reasons.items()))
            listed = f"{count.listed} ({reasons})" if reasons else str(count.listed)
            out.append(
                f"| {subject} | {source} | {count.compared} | {count.agreeing} | {listed} | {len(count.unexplained)} |"
            )
        out.append("")
    notes = []
    for (group, subject, source), count in table.rows.items():
        for example in count.unexplained[:SHOWN]:
            notes.append(f"- unexplained, {group} {subject} ({source}): {example}")
        if len(count.unexplained) > SHOWN:
            notes.append(f"- ... and {len(count.unexplained) - SHOWN} more for {subject} ({source})")
        notes += [f"- {group} {subject} ({source}): {note}" for note in count.notes]
    notes += [f"- skipped {reason}" for reason in table.skipped]
    if notes:
        out += ["Notes:", "", *notes, ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.differential_tally", description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=100, help="generated inputs per strategy (default 100)")
    parser.add_argument("--only", choices=GROUPS, action="append", help="one group (repeat for several)")
    options = parser.parse_args(argv)
    os.chdir(ROOT)  # the tests name captures relative to the repository root
    # what a library logs or prints about the malformed streams it is fed (LiteLLM logs each exception it
    # hands on, and prints a help banner) is noise here, as under pytest, which captures it
    logging.disable(logging.CRITICAL)
    table = Table()
    started = time.monotonic()
    with open(os.devnull, "w") as devnull, redirect_stdout(devnull):
        for group in options.only or GROUPS:
            if group == "python":
                _python(table, options.examples)
            elif group == "node":
                _node(table, options.examples)
            else:
                _parsers(table, options.examples)
    print(render(table, options.examples))
    _progress(f"done in {time.monotonic() - started:.0f} s")
    return 1 if any(c.unexplained for c in table.rows.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
