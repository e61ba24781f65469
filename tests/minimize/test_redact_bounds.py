"""``minimize --redact`` on what strangers send, run as the CLI under the adversarial tests' address-space limit.

Redaction used to replay the capture once per value when a kind could not be replaced at once (a
52 KB capture was still being redacted after 300 s); it is now one rewrite and a few replays
whatever the capture holds, so the replays the summary line counts are bounded, and memory stays
under the same bound as a replay's. A value nested past what the rewrite walks into is written as
``[redacted]`` whole; one just inside that depth is still read and masked letter by letter.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from benchmarks.sessions import USER_MARKER, session
from stream_doctor.minimizer.redact import KINDS
from tests.test_adversarial import PEAK_BOUND_KB, run_cli

#: the CLI in a child process under an address-space limit, three runs (3.5 s of CPU)
pytestmark = [pytest.mark.slow]

_SUMMARY = re.compile(r"(\d+) replays")


def _replays(err: str) -> int:
    found = _SUMMARY.search(err)
    assert found is not None, err
    return int(found.group(1))


def test_many_values_are_masked_in_a_few_replays_within_the_memory_bound(tmp_path: Path) -> None:
    # 15 turns whose calls carry 60 distinct values each (about 0.4 MB, every value echoed in the
    # history), SD103: the application ran one call with another turn's path, which a mask that
    # made the two paths equal would lose
    records = [orjson.loads(line) for line in session("anthropic", 15, personal=True, words=4, tags=60).splitlines()]
    executes = [record for record in records if record["sd"] == "execute"]
    executes[6]["input"] = dict(executes[6]["input"], path=executes[7]["input"]["path"])
    capture = tmp_path / "session.jsonl"
    capture.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))
    out = tmp_path / "small.jsonl"

    ran = run_cli("minimize", str(capture), "-k", "SD103", "-o", str(out), "--redact", "--max-seconds", "0")

    assert ran.code == 0, ran.err
    assert _replays(ran.err) <= len(KINDS) + 2 and "kept (a finding depends" not in ran.err
    assert ran.peak_kb < PEAK_BOUND_KB
    assert USER_MARKER.split()[0].encode() not in out.read_bytes()


def _nested(depth: int) -> bytes:
    return b'{"a":' * depth + orjson.dumps(f"{USER_MARKER} deep") + b"}" * depth


def test_a_value_nested_past_the_walk_is_redacted_whole_and_one_just_inside_is_masked(tmp_path: Path) -> None:
    sse = (Path(__file__).parents[2] / "fixtures" / "anthropic" / "abandoned_at_max_tokens.sse").read_bytes()
    for depth, whole in ((1000, True), (150, False)):
        hostile = sse.replace(b'{"type": "ping"}', b'{"type": "ping", "x": ' + _nested(depth) + b"}", 1)
        capture = tmp_path / f"deep{depth}.sse"
        capture.write_bytes(hostile)
        out = tmp_path / f"small{depth}.sse"

        ran = run_cli("minimize", str(capture), "-k", "SD301", "-o", str(out), "--redact", "--max-seconds", "0")

        assert ran.code == 0, ran.err
        assert ran.peak_kb < PEAK_BOUND_KB
        written = out.read_bytes()
        assert USER_MARKER.split()[0].encode() not in written
        ping = next(line for line in written.splitlines() if line.startswith(b'data: {"type":"ping"'))
        # past the walk, the rest is written as [redacted]; just inside it, all is read, and masked
        assert (b'"[redacted]"' in ping) is whole
        assert (ping.count(b'{"a":') == depth) is not whole
