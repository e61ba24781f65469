"""The release's version, defined once below every layer: ``stream_doctor.__version__``, ``--version`` and the
reports that name the tool read it here, and pyproject.toml's dynamic version reads it too (statically)."""

from __future__ import annotations

__version__ = "0.1.0"
