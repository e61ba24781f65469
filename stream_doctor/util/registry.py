"""A name -> implementation registry that imports each implementation on first use.

``stream-doctor --help`` or a replay forced to one provider should not pay for importing every
provider; a ``LazyRegistry`` knows the names (and their order) up front and imports a module the
first time its entry is looked up or iterated over. Every plug-in family is one: adapters, their
detection words, readers, rules, reporters, client profiles, request readers and commands.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")


class LazyRegistry(Mapping[str, T], Generic[T]):
    """Names mapped to ``module`` paths; the value is ``pick(module)`` (default: the module itself), or
    the module's attribute ``NAME`` for a path written ``module:NAME``.

    ``modules`` is the table, or a function that builds it (called once, on first use) where the
    names are found rather than written: the rules, from their modules' file names."""

    def __init__(
        self, modules: Mapping[str, str] | Callable[[], Mapping[str, str]], pick: Callable[[Any], T] | None = None
    ) -> None:
        self._source = modules if callable(modules) else None
        self._table: dict[str, str] | None = None if callable(modules) else dict(modules)
        self._pick = pick
        self._loaded: dict[str, T] = {}

    @property
    def _modules(self) -> dict[str, str]:
        if self._table is None:
            assert self._source is not None
            self._table = dict(self._source())
        return self._table

    def __getitem__(self, name: str) -> T:
        try:
            return self._loaded[name]
        except KeyError:
            pass
        path, _, attribute = self._modules[name].partition(":")  # KeyError for an unknown name
        module = importlib.import_module(path)
        if attribute:
            value: T = getattr(module, attribute)
        else:
            value = self._pick(module) if self._pick is not None else cast(T, module)
        self._loaded[name] = value
        return value

    def __contains__(self, name: object) -> bool:
        return name in self._modules

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)

    def where(self, name: str) -> str:
        """The module path registered for ``name`` (``module`` or ``module:NAME``), importing nothing."""
        return self._modules[name]

    def loaded(self) -> tuple[str, ...]:
        """The names imported so far (for the start-up tests)."""
        return tuple(self._loaded)
