"""The sentence for a name that is none of a closed set's, with the closest one ("did you mean …").

Every closed choice words a typo here, whatever layer checks it: the options and configuration values
(``config/selection.check_choice``), the configuration's keys, the commands (``cli/usage.py``) and the
client profiles (``clients.resolve``), so a typo reads the same everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable


def unknown(name: str, choices: Iterable[str], what: str) -> str:
    """Why ``name`` is refused: ``unknown WHAT 'name'; did you mean 'x'? (choose from a, b, …)``, the
    choices in their order."""
    options = list(choices)
    return f"unknown {what} {name!r}{suggestion(name, options)} (choose from {', '.join(options)})"


def suggestion(given: str, choices: Iterable[str]) -> str:
    """``; did you mean 'x'?`` for the choice ``given`` most likely meant, or nothing: for a rule code the
    one sharing its longest prefix, else the nearest spelling (then ignoring case)."""
    options = list(choices)
    close: list[str] = []
    if given.upper().startswith("SD"):  # a rule code: the one sharing the longest prefix
        prefix = given.upper()
        while len(prefix) > 2 and not any(o.startswith(prefix) for o in options):
            prefix = prefix[:-1]
        close = [o for o in options if o.startswith(prefix)][:1] if len(prefix) > 2 else []
    if not close:
        import difflib

        close = difflib.get_close_matches(given, options, n=1, cutoff=0.6)
    if not close:
        lowered = difflib.get_close_matches(given.lower(), [o.lower() for o in options], n=1, cutoff=0.6)
        close = [o for o in options if o.lower() in lowered][:1]
    return f"; did you mean {close[0]!r}?" if close else ""
