"""How to install stream-doctor with an extra, said once for every message about a missing extra.

stream-doctor is not published on a package index yet, so pip cannot install it by its name alone:
it installs from a clone of its repository or from the repository's Git URL (README, "Installing").
"""

from __future__ import annotations

#: The repository to install from until the project is published: a placeholder, OWNER being whoever
#: hosts the copy you use (pyproject.toml's Homepage, https://stream-doctor.dev, serves no package).
REPOSITORY = "https://github.com/OWNER/stream-doctor"


def install_extra(extra: str) -> str:
    """The commands that install ``extra``, as a missing-extra message ends."""
    return f'pip install -e ".[{extra}]" in a clone of stream-doctor, or pip install "stream-doctor[{extra}] @ git+{REPOSITORY}"'
