"""Reporters stage: pure functions from a Report to text; they never print or read CLI flags."""

from __future__ import annotations

FORMATS = ("terminal", "json")

#: ``check --report FORMAT[:PATH]``: the module under reporters/ that renders each format, imported
#: when used. Each has ``render(CheckResult) -> str`` (the terminal one also takes width and colour).
CHECK_FORMATS: dict[str, str] = {
    "terminal": "check_terminal",
    "json": "check_json",
    "junit": "junit",
    "sarif": "sarif",
    "github": "github",
    "markdown": "markdown",
}
