"""What the fast path (``cli/fast.py``) parses: generated from the typer app by
``python -m stream_doctor.cli.fast_table``; do not edit (``tests/cli/test_fast.py`` checks it).

Per command: its arguments (name, nargs: 1 or -1 for any number, required), its options (each
option string: the parameter's name and its kind, "str", "append", ("int", min, max) or
("flag", value)) and every parameter's default. ``HELP`` is what ``stream-doctor --help`` prints
on a terminal 80 columns wide or wider.
"""

from __future__ import annotations

from typing import Any

COMMANDS: dict[str, dict[str, Any]] = {
    "replay": {
        "arguments": (("capture", -1, True),),
        "options": {
            "--call": ("call", "str"),
            "--timeline": ("timeline", ("flag", True)),
            "--format": ("output", "str"),
            "-f": ("output", "str"),
            "--container": ("container", "str"),
            "--input-format": ("container", "str"),
            "--provider": ("provider", "str"),
            "--tools": ("tools", "str"),
            "--executed": ("executed", "append"),
            "--executions": ("executions", "str"),
            "--client": ("client", "append"),
            "--fail-on": ("fail_on", "str"),
            "--select": ("select", "append"),
            "--ignore": ("ignore", "append"),
            "--extend-select": ("extend_select", "append"),
            "--per-file-ignores": ("per_file_ignores", "append"),
            "--width": ("width", ("int", 1, None)),
            "--color": ("color", ("flag", True)),
            "--no-color": ("color", ("flag", False)),
            "--config": ("config", "str"),
            "--isolated": ("isolated", ("flag", True)),
            "--quiet": ("quiet", ("flag", True)),
            "-q": ("quiet", ("flag", True)),
            "--exit-zero": ("exit_zero", ("flag", True)),
            "--output-file": ("output_file", "str"),
            "-o": ("output_file", "str"),
            "--max-rows": ("max_rows", ("int", 0, None)),
            "--max-bytes": ("max_bytes", "str"),
            "--max-frames": ("max_frames", ("int", 1, None)),
            "--statistics": ("statistics", ("flag", True)),
        },
        "defaults": {
            "capture": None,
            "call": None,
            "timeline": False,
            "output": "terminal",
            "container": None,
            "provider": None,
            "tools": None,
            "executed": [],
            "executions": None,
            "client": [],
            "fail_on": None,
            "select": [],
            "ignore": [],
            "extend_select": [],
            "per_file_ignores": [],
            "width": None,
            "color": None,
            "config": None,
            "isolated": False,
            "quiet": False,
            "exit_zero": False,
            "output_file": None,
            "max_rows": 200,
            "max_bytes": None,
            "max_frames": None,
            "statistics": False,
        },
    },
    "check": {
        "arguments": (("paths", -1, False),),
        "options": {
            "--select": ("select", "append"),
            "--ignore": ("ignore", "append"),
            "--extend-select": ("extend_select", "append"),
            "--per-file-ignores": ("per_file_ignores", "append"),
            "--fail-on": ("fail_on", "str"),
            "--report": ("report", "append"),
            "-r": ("report", "append"),
            "--jobs": ("jobs", ("int", 0, None)),
            "-j": ("jobs", ("int", 0, None)),
            "--provider": ("provider", "str"),
            "--container": ("container", "str"),
            "--config": ("config", "str"),
            "--isolated": ("isolated", ("flag", True)),
            "--respect-gitignore": ("respect_gitignore", ("flag", True)),
            "--no-respect-gitignore": ("respect_gitignore", ("flag", False)),
            "--client": ("client", "append"),
            "--update-expectations": ("update_expectations", ("flag", True)),
            "--width": ("width", ("int", 1, None)),
            "--color": ("color", ("flag", True)),
            "--no-color": ("color", ("flag", False)),
            "--max-rows": ("max_rows", ("int", 0, None)),
            "--max-bytes": ("max_bytes", "str"),
            "--max-frames": ("max_frames", ("int", 1, None)),
            "--quiet": ("quiet", ("flag", True)),
            "-q": ("quiet", ("flag", True)),
            "--exit-zero": ("exit_zero", ("flag", True)),
            "--output-file": ("output_file", "str"),
            "-o": ("output_file", "str"),
            "--statistics": ("statistics", ("flag", True)),
        },
        "defaults": {
            "paths": None,
            "select": [],
            "ignore": [],
            "extend_select": [],
            "per_file_ignores": [],
            "fail_on": None,
            "report": [],
            "jobs": None,
            "provider": None,
            "container": None,
            "config": None,
            "isolated": False,
            "respect_gitignore": True,
            "client": [],
            "update_expectations": False,
            "width": None,
            "color": None,
            "max_rows": 200,
            "max_bytes": None,
            "max_frames": None,
            "quiet": False,
            "exit_zero": False,
            "output_file": None,
            "statistics": False,
        },
    },
}

HELP = (
    "Usage: stream-doctor [OPTIONS] COMMAND [ARGS]...\n"
    "\n"
    "  Replay captured LLM streams and diagnose how their tool calls were\n"
    "  reassembled.\n"
    "\n"
    "Options:\n"
    "  -V, --version         Print the version and exit.\n"
    "  --install-completion  Install completion for the current shell.\n"
    "  --show-completion     Show completion for the current shell, to copy it or\n"
    "                        customize the installation.\n"
    "  -h, --help            Show this message and exit.\n"
    "\n"
    "Commands:\n"
    "  replay    Replay a capture (or one session's captures) through the...\n"
    "  convert   Rewrite a capture as a stream-doctor envelope (JSONL) that...\n"
    "  minimize  Cut a capture down to the smallest one on which the kept...\n"
    "  fixture   Turn a capture into a minimized, redacted fixture and a...\n"
    "  check     Check many captures against their expected findings; write...\n"
    "  scan      Scan a dataset of logged streams on Dask: findings as...\n"
    "  record    Record every exchange through a reverse proxy, one envelope...\n"
    "  clients   List the client profiles `replay --client` takes: what each...\n"
    "  rules     List every rule: code, name, severity, summary.\n"
    "  explain   Print one rule's documentation.\n"
)
