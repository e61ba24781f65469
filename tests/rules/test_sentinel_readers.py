"""SD508 names the libraries that fail on a ``[DONE]`` not written exactly from ``clients.framing``'s
table, the one the profiles' machines read: every profile that tests the sentinel is in it, as it tests it."""

from __future__ import annotations

from stream_doctor.clients import PROFILES
from stream_doctor.clients.framing import SENTINEL_READERS


def test_the_sentinel_table_is_the_profiles_own() -> None:
    profiled = {p.name: p.machine().done_sentinel for p in PROFILES.values()}
    assert dict(SENTINEL_READERS) == {name: sentinel for name, sentinel in profiled.items() if sentinel is not None}
