"""Names the user types, checked: rule selectors, providers, capture formats (with "did you mean …").

Every entry point (the CLI, the library API, the configuration file, the pytest plugin) checks
through here, so a typo is refused the same way everywhere: a ``ValueError`` whose message names
what was wrong and what was probably meant.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def codes(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """Selectors as given (repeated, or comma-separated), upper-cased, blanks dropped."""
    if value is None:
        return ()
    parts = [value] if isinstance(value, str) else list(value)
    return tuple(code.strip().upper() for part in parts for code in str(part).split(",") if code.strip())


def known_codes() -> tuple[str, ...]:
    """Every rule code, the stream rules' and ``check``'s own (SD000, SD900)."""
    from stream_doctor.check.rules import CHECK_RULES
    from stream_doctor.rules import RULES

    return tuple(sorted({rule.code for rule in (*RULES, *CHECK_RULES)}))


def check_selectors(selectors: Iterable[str], option: str) -> None:
    """Refuse a selector that is neither ``ALL`` nor a prefix of some rule code."""
    every = known_codes()
    for selector in selectors:
        if selector == "ALL" or any(code.startswith(selector) for code in every):
            continue
        raise ValueError(
            f"--{option} {selector}: no rule code is or starts with {selector!r}{_suggest(selector, every)}"
        )


def check_provider(name: str | None) -> str | None:
    if name is None:
        return None
    from stream_doctor.providers import ADAPTERS

    if name in ADAPTERS:
        return name
    raise ValueError(f"unknown provider {name!r}{_suggest(name, ADAPTERS)} (choose from {', '.join(sorted(ADAPTERS))})")


def check_container(name: str | None) -> str | None:
    if name is None:
        return None
    from stream_doctor.capture import CONTAINERS

    if name in CONTAINERS:
        return name
    raise ValueError(
        f"unknown capture format {name!r}{_suggest(name, CONTAINERS)} (choose from {', '.join(CONTAINERS)})"
    )


def check_choice(name: str, choices: Iterable[str], what: str) -> str:
    options = list(choices)
    if name in options:
        return name
    raise ValueError(f"unknown {what} {name!r}{_suggest(name, options)} (choose from {', '.join(options)})")


def _suggest(given: str, choices: Iterable[str]) -> str:
    options = list(choices)
    close: list[str] = []
    if given.upper().startswith("SD"):  # a rule code: the one sharing the longest prefix
        prefix = given.upper()
        while len(prefix) > 2 and not any(o.startswith(prefix) for o in options):
            prefix = prefix[:-1]
        close = [o for o in options if o.startswith(prefix)][:1] if len(prefix) > 2 else []
    if not close:
        close = difflib.get_close_matches(given, options, n=1, cutoff=0.6)
    if not close:
        lowered = difflib.get_close_matches(given.lower(), [o.lower() for o in options], n=1, cutoff=0.6)
        close = [o for o in options if o.lower() in lowered][:1]
    return f"; did you mean {close[0]!r}?" if close else ""
