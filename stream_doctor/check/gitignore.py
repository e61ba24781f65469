"""``.gitignore`` for ``check``: folders and globs skip what git ignores, as ruff does (``pathspec``).

Every ``.gitignore`` from a path's folder up to the repository's root (the folder holding
``.git``) applies, each relative to its own folder, the nearer one deciding (so a nested file can
re-include with ``!``). Outside a repository nothing is ignored. Files named on the command line
are always replayed; ``--no-respect-gitignore`` or ``respect-gitignore = false`` turns this off.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any


class GitIgnored:
    """``GitIgnored()(path)``: is this path (relative to the working directory) ignored by git?"""

    def __call__(self, path: str) -> bool:
        absolute = Path(os.path.abspath(path))
        root = _repository_root(str(absolute.parent))
        if root is None:
            return False
        folder = absolute.parent
        is_dir = absolute.is_dir()
        while True:
            spec = _spec(str(folder))
            if spec is not None:
                relative = absolute.relative_to(folder).as_posix() + ("/" if is_dir else "")
                result = spec.check_file(relative)
                if result.include is not None:  # this file says something about the path
                    return bool(result.include)
            if str(folder) == root or folder.parent == folder:
                return False
            folder = folder.parent


@lru_cache(maxsize=4096)
def _repository_root(folder: str) -> str | None:
    current = Path(folder)
    for candidate in (current, *current.parents):
        if (candidate / ".git").exists():
            return str(candidate)
    return None


@lru_cache(maxsize=4096)
def _spec(folder: str) -> Any:
    path = os.path.join(folder, ".gitignore")
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            lines = file.read().splitlines()
    except OSError:
        return None
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(lines)
