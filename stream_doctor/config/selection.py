"""Names the user types, checked: rule selectors, providers, capture formats, client profiles and modes
(with "did you mean …").

Every entry point (the CLI, the library API, the configuration file, the pytest plugin) checks
through here, so a typo is refused the same way everywhere: a ``ValueError`` whose message names
what was wrong and what was probably meant.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stream_doctor.config.globs import Glob
    from stream_doctor.values.findings import Severity
    from stream_doctor.values.options import ClientMode


def codes(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """Selectors as given (repeated, or comma-separated), upper-cased, blanks dropped."""
    if value is None:
        return ()
    parts = [value] if isinstance(value, str) else list(value)
    return tuple(code.strip().upper() for part in parts for code in str(part).split(",") if code.strip())


def enabled(code: str, select: Iterable[str], ignore: Iterable[str]) -> bool:
    """Whether a rule is on: the most specific selector matching its code decides, as in ruff.

    ``--select SD3 --ignore SD30 --select SD301`` turns on SD301 and every SD3xx but SD30x. With
    no ``select`` every rule is selected (as ``ALL``, which is less specific than any prefix); an
    ``ignore`` as specific as a ``select`` wins.
    """
    best, on = -1, False
    chosen = tuple(select) or ("ALL",)
    for prefix in chosen:
        length = 0 if prefix == "ALL" else len(prefix)
        if length > best and (prefix == "ALL" or code.startswith(prefix)):
            best, on = length, True
    for prefix in ignore:
        length = 0 if prefix == "ALL" else len(prefix)
        if length >= best and (prefix == "ALL" or code.startswith(prefix)):
            best, on = length, False
    return on


def known_codes() -> tuple[str, ...]:
    """Every rule code, ``check``'s own (SD000, SD900) too, read from the catalog without importing a rule."""
    from stream_doctor.rules import codes

    return codes()


def check_selectors(selectors: Iterable[str], option: str) -> None:
    """Refuse a selector that is neither ``ALL`` nor a prefix of some rule code."""
    selectors = tuple(selectors)
    if not selectors:
        return
    every = known_codes()
    for selector in selectors:
        if selector == "ALL" or any(code.startswith(selector) for code in every):
            continue
        from stream_doctor.util.choices import suggestion  # only for a typo: a replay does not load it

        raise ValueError(
            f"--{option} {selector}: no rule code is or starts with {selector!r}{suggestion(selector, every)}"
        )


def check_selection(select: Iterable[str], ignore: Iterable[str]) -> None:
    """Refuse a selection that leaves no rule at all (``--select SD2 --ignore SD2``)."""
    chosen, dropped = tuple(select), tuple(ignore)
    if not chosen and not dropped:
        return
    if not any(enabled(code, chosen, dropped) for code in known_codes()):
        given = " ".join([*(f"--select {c}" for c in chosen), *(f"--ignore {c}" for c in dropped)])
        raise ValueError(f"the selection matches no rule ({given})")


def per_file_codes(path: str, table: Mapping[str, str | Iterable[str]]) -> tuple[str, ...]:
    """The codes a ``per-file-ignores`` table (glob -> codes) ignores for ``path`` (as given, POSIX slashes)."""
    posix = path.replace(os.sep, "/")
    found: list[str] = []
    for pattern, values in table.items():
        listed = codes(values)
        check_selectors(listed, f"per-file-ignores {pattern}")  # a typo is an error even where nothing matches
        if _glob_match(posix, pattern):
            found += listed
    return tuple(found)


def parse_per_file_ignores(values: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """``--per-file-ignores PATTERN:CODES`` options as a table (a pattern given twice adds up)."""
    table: dict[str, tuple[str, ...]] = {}
    for value in values:
        pattern, sep, listed = value.rpartition(":")
        if not sep or not pattern or not listed.strip():
            raise ValueError(f"--per-file-ignores {value}: expected PATTERN:CODES, e.g. 'captures/relay/*.sse:SD001'")
        table[pattern] = (*table.get(pattern, ()), *codes(listed))
        check_selectors(table[pattern], f"per-file-ignores {pattern}")
        try:
            _glob(pattern)
        except ValueError as error:
            raise ValueError(f"--{error}") from None
    return table


def _glob_match(path: str, pattern: str) -> bool:
    return _glob(pattern).matches(path.removeprefix("./"))


@lru_cache(maxsize=256)
def _glob(pattern: str) -> Glob:
    """The compiled pattern (once per pattern, not per path); ValueError naming it when it is not a glob."""
    from stream_doctor.config.globs import Glob, GlobError

    try:
        return Glob(pattern).check()
    except GlobError as error:
        raise ValueError(f"per-file-ignores {pattern}: not a valid glob: {error}") from None


def check_provider(name: str | None) -> str | None:
    """A provider named by the API or a configuration file (the command line's is checked as it is read)."""
    from stream_doctor.providers import ADAPTERS

    return None if name is None else check_choice(name, ADAPTERS, "provider")


def check_container(name: str | None) -> str | None:
    """A container named by the API or a configuration file (the command line's is checked as it is read)."""
    from stream_doctor.capture import CONTAINERS

    return None if name is None else check_choice(name, CONTAINERS, "container")


def check_clients(names: str | Iterable[str] | None) -> tuple[str, ...]:
    """The profile names ``--client`` (or the API's ``clients``) selects: repeated, comma-separated or
    ``all``, any case; ValueError with the closest names for one that is none (``clients.resolve``).
    None (an option not given, as click hands it to a command whose default is None) selects none."""
    names = (names,) if isinstance(names, str) else tuple(names or ())
    if not names:
        return ()  # the profiles' registry stays unimported
    from stream_doctor.clients import UnknownClient, resolve

    try:
        return tuple(profile.name for profile in resolve(names))
    except UnknownClient as error:
        raise ValueError(str(error)) from None


def check_client_mode(mode: str) -> ClientMode:
    """One of ``--client-mode``'s modes (``values/options.CLIENT_MODES``), any case; ValueError else."""
    from stream_doctor.values.options import CLIENT_MODES

    checked = check_choice(mode.lower(), CLIENT_MODES, "client mode")
    return next(known for known in CLIENT_MODES if known == checked)


def check_severity(label: str) -> Severity:
    """The severity a label names (``--fail-on``, the configuration's ``fail-on``, the API's ``fail_on``),
    any case; ValueError with "did you mean" else."""
    from stream_doctor.values.findings import Severity

    return Severity[check_choice(label.lower(), [severity.label for severity in Severity], "severity").upper()]


def check_choice(name: str, choices: Iterable[str], what: str) -> str:
    """``name`` if it is one of ``choices``; else ValueError with the closest and every one, in their order."""
    options = list(choices)
    if name in options:
        return name
    from stream_doctor.util.choices import unknown

    raise ValueError(unknown(name, options, what))
