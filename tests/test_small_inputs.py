"""Small inputs stay small (issue 31): a few kilobytes of patterns, blank lines, comments or field
names never cost minutes or gigabytes. Each attack runs scaled down to seconds in a subprocess under
an address-space limit (``test_adversarial.run_cli``), beside a near miss that must still be read;
``benchmarks/bench_hostile.py`` runs them at full size.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT
from tests.test_adversarial import PEAK_BOUND_KB, run_cli

STARS = "*" * 10_000


def _captures(folder: Path) -> None:
    """Two captures with an error each: ``duplicate_tool_ids.sse`` and ``keep.sse`` (SD405)."""
    body = (ROOT / "fixtures/anthropic/duplicate_tool_ids.sse").read_bytes()
    (folder / "duplicate_tool_ids.sse").write_bytes(body)
    (folder / "keep.sse").write_bytes(body)


def test_a_gitignore_line_of_ten_thousand_stars_is_read_in_bounded_memory(tmp_path: Path) -> None:
    # issue 31: "*" * 10_000 + "x" took 91 s and then a MemoryError (nested loops, one per star)
    (tmp_path / ".git").mkdir()
    _captures(tmp_path)
    (tmp_path / ".gitignore").write_text(f"{STARS}s.sse\n{STARS}q.sse\n")
    ran = run_cli("check", ".", cwd=tmp_path)
    assert ran.code == 1, ran.out + ran.err
    assert "keep.sse" in ran.out  # the near miss: "…q.sse" ignores neither file, "…s.sse" one of them
    assert "duplicate_tool_ids.sse" not in ran.out
    assert ran.peak_kb < PEAK_BOUND_KB


def test_a_per_file_ignores_glob_of_ten_thousand_stars_is_read_in_bounded_memory(tmp_path: Path) -> None:
    # issue 31: 43 s and 1.19 GB for a glob of 10,000 stars
    _captures(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.stream-doctor.per-file-ignores]\n"{STARS}ids.sse" = ["SD405"]\n"{STARS}nothing.sse" = ["SD405"]\n'
    )
    ran = run_cli("check", ".", "-r", "github", cwd=tmp_path)
    assert ran.code == 1, ran.out + ran.err
    assert "keep.sse" in ran.out and "SD405" in ran.out  # the near miss: still reported
    assert "duplicate_tool_ids.sse" not in ran.out  # its SD405 is ignored
    assert ran.peak_kb < PEAK_BOUND_KB
