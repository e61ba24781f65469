"""Hypothesis strategies for the JSON values a capture carries, as orjson reads and writes them: text
without lone surrogates, integers that fit 64 bits, finite floats, lists and objects of them."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st


def json_text(max_size: int) -> st.SearchStrategy[str]:
    """Strings JSON can carry (no lone surrogate, which orjson refuses to write)."""
    return st.text(st.characters(blacklist_categories=("Cs",)), max_size=max_size)


def json_values(text: int, size: int, leaves: int) -> st.SearchStrategy[Any]:
    """Any JSON value: strings up to ``text`` characters (keys too), lists and objects up to ``size`` items,
    at most ``leaves`` scalars in all."""
    strings = json_text(text)
    return st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-(2**63), 2**63 - 1)
        | st.floats(allow_nan=False, allow_infinity=False)
        | strings,
        lambda inner: st.lists(inner, max_size=size) | st.dictionaries(strings, inner, max_size=size),
        max_leaves=leaves,
    )
