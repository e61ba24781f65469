"""SD508 names the libraries that fail on a ``[DONE]`` not written exactly from ``clients.framing``'s
table, which must say what each profile's machine does (the rule may not load the profiles)."""

from __future__ import annotations

from stream_doctor.clients import PROFILES
from stream_doctor.clients.framing import SENTINEL_READERS


def test_the_sentinel_table_is_the_profiles_own() -> None:
    profiled = {p.name: p.machine().done_sentinel for p in PROFILES}
    assert dict(SENTINEL_READERS) == {name: sentinel for name, sentinel in profiled.items() if sentinel is not None}
