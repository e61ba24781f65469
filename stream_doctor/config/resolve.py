"""The one resolver of a run's options: what the caller said (``options.Given``: the command line, or
the library API's arguments) over the configuration file over the defaults, as ruff layers them.

``replay``, ``check``, ``convert``, ``minimize``, ``fixture``, ``record``, ``scan``, the library API and
the pytest plugin all build their ``Options`` here, so a key of the configuration means the same to
each of them.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from stream_doctor.config.selection import check_container, check_provider, check_selection, check_selectors
from stream_doctor.config.selection import per_file_codes as per_file_codes
from stream_doctor.values.options import Given, Options

if TYPE_CHECKING:
    from stream_doctor.config.file import Config  # not at run time: a replay without a file never reads one

#: The options ``Given`` says, and ``Config`` too, that are taken whole from whichever layer says them.
LAYERED = ("fail_on", "provider", "container", "max_bytes", "max_frames")


def resolve(given: Given, config: Config | None = None, path: str = "", run: Options = Options()) -> Options:
    """The options the capture at ``path`` is replayed with: ``given`` over ``config`` (None: no file)
    over the defaults, on top of ``run`` (the options no configuration sets: clients, tools, executions …).

    ValueError when the selection leaves no rule (``--select SD2 --ignore SD2``)."""
    select, ignore = selection(given, config)
    _check_selection(select, ignore)
    per_file = per_file_codes(path, dict(given.per_file_ignores)) if given.per_file_ignores else ()
    configured: dict[str, Any] = {}
    if config is not None:
        ignore = (*ignore, *config.ignores_for(path))
        configured = {name: getattr(config, name) for name in LAYERED} | {"provider": config.provider_for(path)}
    said = {name: value for name in LAYERED if (value := getattr(given, name)) is not None}
    return replace(run, select=select, ignore=(*ignore, *per_file), **(configured | said))


def selection(given: Given, config: Config | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """select and ignore, the caller's over the file's (per-path and per-file ignores apart)."""
    # As ruff layers them: a select given starts afresh (the file's select and ignore no longer
    # apply); an ignore given adds to the file's; extend-select adds to whichever select applies.
    if given.select is not None:
        select, ignore = given.select, given.ignore
    elif config is not None:
        select, ignore = config.select, (*config.ignore, *given.ignore)
    else:
        select, ignore = (), given.ignore
    extend = (*(config.extend_select if config is not None else ()), *given.extend_select)
    if extend:
        select = (*(select or ("ALL",)), *extend)
    return select, ignore


def checked(given: Given) -> Given:
    """``given`` when every name in it exists: ValueError with "did you mean" for an unknown rule
    selector, provider or container (the command line checks them as it is read)."""
    check_selectors(given.select or (), "select")
    check_selectors(given.ignore, "ignore")
    check_selectors(given.extend_select, "extend-select")
    for pattern, codes in given.per_file_ignores:
        check_selectors(codes, f"per-file-ignores {pattern}")
    check_provider(given.provider)
    check_container(given.container)
    return given


@lru_cache(maxsize=64)
def _check_selection(select: tuple[str, ...], ignore: tuple[str, ...]) -> None:
    # once per selection, not once per capture of a check run
    check_selection(select, ignore)
