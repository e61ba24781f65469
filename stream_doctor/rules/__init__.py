"""Rules stage: pure checks over the accumulated stream, one module per rule, codes stable forever.

Codes are grouped by hundreds (see ``base.FAMILIES``). A retired code stays reserved: never reuse one.
This is the one rule catalog: the ``rules`` listing, ``explain``, SARIF's rules table and rule
selection read it, also for the rules ``check`` raises itself (scope ``"check"``: SD000, SD900).

A rule is registered by its module's path and nothing else: ``RULES`` lists the files named
``sdNNN_<name>.py`` in the folders of ``base.FOLDERS`` (the code and the name are the file's, the scope
its folder's), and imports a rule the first time it is asked for: a replay with no request history and
no ``--client`` never imports the conversation and client rules (``rules_of``).
"""

from __future__ import annotations

import os
from pathlib import Path

from stream_doctor.rules.base import FOLDERS, MODULE_NAME, Rule, Scope
from stream_doctor.util.registry import LazyRegistry


def _listed() -> dict[str, str]:
    """Code -> ``stream_doctor.rules.<folder>.<module>:check`` for every rule module, in code order,
    read from the folders' file names (no rule imported; a listing, not ``pkgutil``, which costs ten
    times as much at start-up)."""
    found: dict[str, str] = {}
    for folder in FOLDERS:
        for file_name in sorted(os.listdir(Path(__file__).parent / folder)):
            stem, dot_py, _ = file_name.partition(".py")
            if not dot_py or _ or stem.startswith("_"):
                continue  # not a module, or a family's helper (_calls.py, _common.py …) or __init__.py
            named = MODULE_NAME.fullmatch(stem)
            if named is None:
                raise ImportError(f"rules/{folder}/{file_name}: a rule module is named sdNNN_<name>.py")
            code, path = f"SD{named[1]}", f"stream_doctor.rules.{folder}.{stem}:check"
            if code in found:
                raise ImportError(f"two modules are rule {code}: {found[code]} and {path}")
            found[code] = path
    return dict(sorted(found.items()))


#: Every rule by code, in code order; a rule module is imported the first time its rule is asked for.
RULES: LazyRegistry[Rule] = LazyRegistry(_listed)


def scope_of(code: str) -> Scope:
    """A rule's scope, from its folder (importing no rule)."""
    return FOLDERS[RULES.where(code).split(".")[2]]


def codes() -> tuple[str, ...]:
    """Every rule's code, importing none."""
    return tuple(RULES)


def rules_of(scope: Scope) -> tuple[Rule, ...]:
    """The rules of one scope, in code order (their modules imported on first use, once)."""
    return tuple(RULES[code] for code in RULES if scope_of(code) == scope)


def lookup(code_or_name: str) -> Rule | None:
    """A rule by code (``SD201``, any case) or by name (``unparseable-arguments``)."""
    wanted = code_or_name.strip()
    if wanted.upper() in RULES:
        return RULES[wanted.upper()]
    return next((r for r in RULES.values() if r.name == wanted.lower()), None)
