"""The client profiles for ``stream-doctor clients``: a table, or JSON for tools."""

from __future__ import annotations

from typing import Sequence

import orjson
from rich.table import Table
from rich.text import Text

from stream_doctor.clients.base import Profile
from stream_doctor.reporters import RenderOptions, _text

#: What each kind of profile's findings weigh, on the row that heads its group.
HEADINGS = {"library": ("libraries", "(a warning when they would break)"), "pattern": ("naive patterns", "(info)")}


def render(profiles: Sequence[Profile], options: RenderOptions) -> str:
    """Five columns when the two of text (models, behaviour) get ``_text.MIN_TEXT`` cells each;
    narrower (at 80 or 100 columns), two: the name, and beside it what it models, then its version and
    what it reads, then its behaviour, each wrapped in the room the name leaves."""
    console, buffer = _text.console(options)
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    fixed = [[p.name for p in profiles], [p.version or "" for p in profiles], [_reads(p) for p in profiles]]
    wide = _text.text_room(options, fixed, 5) >= 2 * _text.MIN_TEXT
    headers = (
        ("name", "models", "version", "reads", "behaviour") if wide else ("name", "models, version, reads, behaviour")
    )
    for column in headers:
        table.add_column(column, no_wrap=column in ("name", "version", "reads"))
    kind = None
    for profile in profiles:
        if profile.kind != kind:
            kind = profile.kind
            group, weight = HEADINGS.get(kind, (kind, ""))
            table.add_row(Text(group, style="bold"), Text(weight, style="bold"), *[""] * (len(headers) - 2))
        models = profile.title + ("" if profile.runs_in_python or profile.kind != "library" else " [TypeScript]")
        if wide:
            table.add_row(profile.name, models, profile.version or "", _reads(profile), profile.summary)
        else:
            version = f"version {profile.version}, " if profile.version else ""
            table.add_row(profile.name, f"{models}\n{version}reads {_reads(profile)}\n{profile.summary}")
    console.print(table)
    console.print(
        "\n`stream-doctor replay CAPTURE --client NAME` (repeatable, or all) shows per call what the client would"
        " hand the tool. Every library profile is checked against its real library at the version shown;"
        " `stream_doctor.clients.library` (the clients extra) also replays captures through the Python ones,"
        " while those marked [TypeScript] run only under Node in stream-doctor's own test suite.",
        highlight=False,
    )
    return _text.finish(buffer.getvalue(), options)


def _reads(profile: Profile) -> str:
    return ", ".join(profile.providers) or "any"


def render_json(profiles: Sequence[Profile]) -> str:
    data = [
        {
            "name": p.name,
            "title": p.title,
            "kind": p.kind,
            "library": p.library,
            "version": p.version,
            "providers": list(p.providers),
            "summary": p.summary,
            "sources": list(p.sources),
            # every library profile is checked against its library by the test suite (Python or Node);
            # the Python ones can also replay a capture through it (stream_doctor.clients.library)
            "checked_against_library": p.kind == "library",
            "replays_through_library": p.runs_in_python,
            "doc": p.doc.strip(),
        }
        for p in profiles
    ]
    return orjson.dumps({"schema_version": 1, "clients": data}, option=orjson.OPT_INDENT_2).decode() + "\n"
