"""Reporters stage: pure functions from a Report to text; they never print or read CLI flags."""

from __future__ import annotations

FORMATS = ("terminal", "json")
